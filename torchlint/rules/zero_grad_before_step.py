"""TL006 zero-grad-before-step: gradients are reset between `backward()` and `step()`.

## What it does

Flags a gradient reset (`optimizer.zero_grad()`, `model.zero_grad()` on
the model the optimizer was built from, or a helper of the same file that
always resets, such as `fast_zero_grad(model)`) that runs after the last
`backward()` and before `optimizer.step()` on the same path through the loop.
Also flags a reset after the backward on every iteration of a loop that is
an accumulation window by itself (`for _ in range(grad_accum):`, or over the
slices or chunks of a batch), whose `optimizer.step()` runs after the loop:
the last micro-batch's gradients are wiped too.

Also flags such a reset in a Lightning hook that runs between the backward
and the step: `opt.zero_grad()` over `trainer.optimizers` or
`self.optimizers()`, or the whole module's `self.zero_grad()` /
`pl_module.zero_grad()`, on every call of `on_after_backward` or
`on_before_optimizer_step` of a `LightningModule` or `Callback`. A
submodule's reset there (`self.encoder.zero_grad()`, freezing that part)
and a reset under an `if` are not flagged.

## Why is this bad?

The reset wipes the gradients `backward()` just computed, so `step()`
applies zeros: plain SGD does nothing at all, and optimizers with momentum
or Adam keep moving on stale state. The loss curve stays flat, or drifts,
and nothing crashes.

## Example

```python
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
```

## Use instead

```python
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
```

Not flagged: resets before `backward()` or after `step()`; a reset under an
`if` that skips the step (`if not math.isfinite(norm): optimizer.zero_grad();
continue`); another optimizer's reset, whose parameters the step does not
touch; a parameter's gradient dropped under a test of its own values (`if
p.grad.sum() == 0: p.grad = None`, `if not torch.isfinite(p.grad).all():`),
which clears only the gradients the test picks (a test of whether there is a
gradient, `p.grad is not None`, reads none: that reset is flagged); helpers
called in turn that each reset, backpropagate and step (one per task): a
backward runs between one helper's reset and the next one's step.

## Fix safety

Safe: a reset placed between a backward and the step that needs its
gradients has only one sensible meaning. The fix moves the reset to just
after `step()`, in the step's block (for an inner loop, after the `step()`
that follows it, when that step is a line of the loop's own block).
"""

from __future__ import annotations

from typing import Iterator, Optional

from torchlint.context import FileContext
from torchlint.model import ERROR
from torchlint.rules import Example, Finding, Rule
from torchlint.training import BackwardSite, Site, TrainingLoop


class ZeroGradBeforeStep(Rule):
    code = "TL006"
    name = "zero-grad-before-step"
    severity = ERROR
    summary = "gradients reset between `backward()` and `step()`"

    def check(self, context: FileContext) -> Iterator[Finding]:
        for loop in context.loops:
            for step in loop.optimizer_steps:
                for reset in loop.resets_wiping(step):
                    backward = _backward_before(loop, reset)
                    reset_code = reset.quote(context.code)
                    message = (
                        f"`{reset_code}` runs after `{context.site_code(backward)}` and before "
                        f"`{context.site_code(step)}`: the step applies zero gradients, so the model does not "
                        f"learn from this batch."
                    )
                    fix = context.move_after(reset, step, f"Move `{reset_code}` after `{context.site_code(step)}`")
                    yield Finding(reset.node, message, fix)
            yield from self._inner(context, loop)
        for reset in context.hook_resets:
            hook = reset.hook.name.value
            when = ("after every backward, before the optimizer steps" if hook == "on_after_backward" else
                    "after the backward of each window, right before the optimizer steps")
            yield Finding(reset.call, (
                f"`{context.code(reset.call)}` in `{hook}()`: Lightning calls this hook {when}, so the step "
                f"applies zero gradients and the model does not learn. Lightning resets the gradients after the "
                f"step already; a reset of your own belongs in `optimizer_zero_grad()`."), None)

    def _inner(self, context: FileContext, loop: TrainingLoop) -> Iterator[Finding]:
        """A reset after the backward on every iteration of a loop that is a window by itself: the step after
        the loop applies none of the window's gradients."""
        window = loop.inner_window
        if window is None or not loop.loop_backwards:
            return
        for reset in loop.window_resets(window):
            if reset.guards or loop.in_accumulate_context(reset):
                continue
            if not all(loop.dominates(backward, reset) for backward in loop.loop_backwards):
                continue  # before the backward: the last micro-batch survives (TL007's)
            backward = _backward_before(loop, reset)
            reset_code, step_code = reset.quote(context.code), context.code(window.step.node)
            header = f"for {context.code(loop.node.target)} in {context.quote(loop.node.iter)}"
            message = (
                f"`{reset_code}` runs after `{context.site_code(backward)}` on every micro-batch of `{header}`, the "
                f"last one included, and `{step_code}` runs after the loop: the step applies zero gradients, so the "
                f"model does not learn from the window."
            )
            fix = None
            if window.step_alone and not reset.contexts:
                fix = context.move_after(reset, window.step, f"Move `{reset_code}` after `{step_code}`")
            yield Finding(reset.node, message, fix)

    valid = (
        """
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
""",
        """
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
""",
        # GAN: the generator's reset sits between the discriminator's backward and the generator's.
        """
for real in loader:
    d_loss = d_criterion(real)
    d_loss.backward()
    d_opt.step()
    g_opt.zero_grad()
    g_loss = g_criterion(real)
    g_loss.backward()
    g_opt.step()
    d_opt.zero_grad()
""",
        # A batch with exploding gradients is dropped: its reset skips the step.
        """
import math
for x, y in loader:
    criterion(model(x), y).backward()
    norm = clip_grad_norm_(model.parameters(), 1.0)
    if not math.isfinite(norm):
        optimizer.zero_grad()
        continue
    optimizer.step()
    optimizer.zero_grad()
""",
    )
    invalid = (
        Example(
            """
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
""",
            line=5,
            fixed="""
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
""",
        ),
        Example(
            """
import torch
optimizer = torch.optim.Adam(model.parameters())
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / 4).backward()
    if (i + 1) % 4 == 0:
        model.zero_grad()
        optimizer.step()
""",
            line=7,
            fixed="""
import torch
optimizer = torch.optim.Adam(model.parameters())
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / 4).backward()
    if (i + 1) % 4 == 0:
        optimizer.step()
        model.zero_grad()
""",
        ),
        # A helper of the same file that always resets.
        Example(
            """
def fast_zero_grad(model):
    for p in model.parameters():
        p.grad = None

for x, y in loader:
    criterion(model(x), y).backward()
    fast_zero_grad(model)
    optimizer.step()
""",
            line=8,
            fixed="""
def fast_zero_grad(model):
    for p in model.parameters():
        p.grad = None

for x, y in loader:
    criterion(model(x), y).backward()
    optimizer.step()
    fast_zero_grad(model)
""",
        ),
    )


def _backward_before(loop: TrainingLoop, site: Site) -> Optional[BackwardSite]:
    """The last (in source order) of the backwards that may run before `site` in its iteration."""
    earlier = [backward for backward in loop.loop_backwards if loop.precedes(backward, site)]
    return earlier[-1] if earlier else None
