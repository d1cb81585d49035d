"""TL007 zero-grad-every-microbatch: an unconditional reset disables gradient accumulation.

## What it does

Flags a gradient reset that runs on every iteration of a loop whose
`optimizer.step()` is conditional (gradient accumulation: `if (i + 1) % N
== 0:` or a micro-batch counter). Also flags a reset before the backward on
every iteration of a loop that is a window by itself: `for _ in
range(grad_accum):` (or over the slices or chunks of a batch), a backward
per micro-batch, and one `optimizer.step()` after the loop.

## Why is this bad?

Accumulation relies on `.grad` summing over the `N` micro-batches of a
window. Resetting on every micro-batch throws away all of them but the last,
so each step uses one micro-batch scaled down by `N`: the large batch the
code promises never happens, and nothing warns.

## Example

```python
for i, (x, y) in enumerate(loader):
    optimizer.zero_grad()
    (criterion(model(x), y) / accum_steps).backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
```

## Use instead

```python
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / accum_steps).backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
```

Not flagged: a reset inside the same condition as the step (or opening the
window, `if i % N == 0: optimizer.zero_grad()`, `if micro == 0:` in an
inner loop), a reset before the inner loop or after its step, loops inside
`with accelerator.accumulate(model):`, where the prepared optimizer's
`zero_grad()` and `step()` only act at the window boundary, and steps whose
condition is not a window: `if torch.isfinite(loss):`, or a one-way threshold
such as `if seen >= warmup_batches:` (a counter that never starts again).

## Fix safety

Safe: the step's condition says where the window ends. The fix moves the
reset into the step's block, right after `step()`; for an inner loop, right
after the `step()` that follows the loop (when that step is a line of the
loop's own block, not one of the branches of an `if`).
"""

from __future__ import annotations

from typing import Iterator, Optional

from torchlint.context import FileContext
from torchlint.model import ERROR
from torchlint.rules import Example, Finding, Rule
from torchlint.training.timeline import listing
from torchlint.training import AccumulationCheck, StepSite, TrainingLoop


class ZeroGradEveryMicrobatch(Rule):
    code = "TL007"
    name = "zero-grad-every-microbatch"
    severity = ERROR
    summary = "unconditional gradient reset in a loop whose step is conditional"

    def check(self, context: FileContext) -> Iterator[Finding]:
        for loop in context.loops:
            reported = set()
            for step in loop.optimizer_steps:
                check = loop.accumulation_check(step)
                if check is None or loop.in_accumulate_context(step):
                    continue
                wiping = {id(reset) for reset in loop.resets_wiping(step)}
                for reset in loop.resets_affecting(step):
                    if reset.guards or reset.depth or id(reset) in wiping or id(reset) in reported:
                        continue
                    if loop.in_accumulate_context(reset):
                        continue
                    reported.add(id(reset))
                    reset_code = reset.quote(context.code)
                    condition = f"`{context.code(check.guard.test)}`"
                    if check.guard.negated:  # in the `else`, or after `if ...: continue`
                        condition += " is false"
                    message = (
                        f"`{reset_code}` runs on every micro-batch but `{context.site_code(step)}` only when "
                        f"{condition}: each step sees only the last micro-batch's gradients, so accumulation "
                        f"over `{context.code(check.count)}` micro-batches is silently disabled."
                    )
                    title = f"Move `{reset_code}` into the step's block, after `{context.site_code(step)}`"
                    yield Finding(reset.node, message, context.move_after(reset, step, title),
                                  timeline=_timeline(loop, step, check))
            yield from self._inner(context, loop)

    def _inner(self, context: FileContext, loop: TrainingLoop) -> Iterator[Finding]:
        """A reset before the backward on every iteration of a loop that is a window by itself."""
        window = loop.inner_window
        if window is None or not loop.loop_backwards:
            return
        for reset in loop.window_resets(window):
            if reset.guards or loop.in_accumulate_context(reset):
                continue  # `if micro == 0:` opens the window
            if not all(loop.dominates(reset, backward) for backward in loop.loop_backwards):
                continue  # after a backward: the step would apply none of the window's gradients
            reset_code, step_code = reset.quote(context.code), context.code(window.step.node)
            header = f"for {context.code(loop.node.target)} in {context.quote(loop.node.iter)}"
            message = (
                f"`{reset_code}` runs on every micro-batch of `{header}`, but `{step_code}` only once, after the "
                f"loop: each step sees only the last micro-batch's gradients, so accumulation over "
                f"{window.count.describe(context.code, known=True)} micro-batches is silently disabled."
            )
            fix = None
            if window.step_alone and not reset.contexts:
                fix = context.move_after(reset, window.step, f"Move `{reset_code}` after `{step_code}`")
            yield Finding(reset.node, message, fix)

    valid = (
        """
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / n).backward()
    if (i + 1) % n == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        """
for i, (x, y) in enumerate(loader):
    if i % n == 0:
        optimizer.zero_grad()
    (criterion(model(x), y) / n).backward()
    if (i + 1) % n == 0:
        optimizer.step()
""",
        """
for batch in loader:
    with accelerator.accumulate(model):
        optimizer.zero_grad()
        accelerator.backward(model(**batch).loss)
        if accelerator.sync_gradients:
            optimizer.step()
""",
        # No accumulation: resetting every iteration is right.
        """
for x, y in loader:
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
""",
        # A one-way threshold, not a window: the counter never starts again.
        """
seen = 0
for x, y in loader:
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    seen += 1
    if seen >= warmup_batches:
        optimizer.step()
""",
    )
    invalid = (
        Example(
            """
for i, (x, y) in enumerate(loader):
    optimizer.zero_grad()
    (criterion(model(x), y) / accum_steps).backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
""",
            line=3,
            fixed="""
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / accum_steps).backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        ),
        Example(
            """
micro = 0
for batch in loader:
    self.optimizer.zero_grad(set_to_none=True)
    loss = self.model(batch).loss / self.accum
    self.scaler.scale(loss).backward()
    micro += 1
    if micro == self.accum:
        self.scaler.step(self.optimizer)
        self.scaler.update()
        micro = 0
""",
            line=4,
            fixed="""
micro = 0
for batch in loader:
    loss = self.model(batch).loss / self.accum
    self.scaler.scale(loss).backward()
    micro += 1
    if micro == self.accum:
        self.scaler.step(self.optimizer)
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.update()
        micro = 0
""",
        ),
    )


def _timeline(loop: TrainingLoop, step: StepSite, check: AccumulationCheck) -> Optional[str]:
    """The steps of a concrete run: each one applies only the micro-batch since the last reset."""
    run = loop.run_of(step, check)
    if run is None or not run.steps:
        return None
    return (f"{run.header()}: steps after micro-batches {listing(run.steps)}, but the gradients are reset "
            f"before every micro-batch: each step applies 1 micro-batch\n"
            f"expected: {run.describe()}, each step applying its whole window")
