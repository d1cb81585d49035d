"""TL004 off-by-one-accumulation-step: `i % N == 0` steps after the first micro-batch.

## What it does

Flags the condition guarding `optimizer.step()` (after `backward()` in the
loop) when it is `i % N == 0` (also `not i % N`, `i % N == 0 and i > 0`,
`i % N == 0 or i == len(x) - 1`, the `else` of `if i % N != 0:`, and
`if i % N: continue` before the step) and `i` is 0 on the first micro-batch:
`enumerate(x)` without a start, `range(...)` from 0, `itertools.count()`, or
a counter set to 0 before the loop and incremented *after* the check. The
counter may be an attribute the class's `__init__` (or a base class's, in
another file of the project) sets to 0 (`self.global_step`), and its bump may
skip one micro-batch of each epoch (`if not is_last_batch: self.global_step
+= 1`, with the epoch's last bump after the loop). A count a resume writes
back (`self.global_step = ckpt["step"]`, a method that restores saved
attributes, called under `if resume:`) is read on a fresh run; one that another
method also advances, or that every run restores, is not known. Also
flags the mirror bug, `(i + 1) % N == 0` where `i` starts at 1
(`enumerate(x, start=1)`, or a counter incremented *before* the check).
The condition may be held in a name assigned in the iteration
(`is_accumulating = i % N != 0` ... `if not is_accumulating:`), and the
loop's body may be a framework's update function (Lightning's
`training_step` under manual optimisation, whose `batch_idx` starts at 0).

Also flags a window whose counter advances only when the optimizer steps
(`global_step += 1` inside the step's branch, or `global_step +=
int(should_step)`): the counter counts steps, not micro-batches, so once the
optimizer has stepped the condition never holds again (or, from a start
where it is false, never holds at all). This one has no fix: the loop needs
a counter of micro-batches.

## Why is this bad?

With `i` starting at 0, `i % N == 0` is already true on the very first
micro-batch: the first update uses one micro-batch instead of `N`, and every
later window ends one micro-batch early, so the last micro-batch of each
window leaks into the next update. The mirror bug steps after `N - 1`
micro-batches. Either way the model does not train on the large batch the
accumulation promises.

## Example

```python
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / accum_steps).backward()
    if i % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
```

## Use instead

```python
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / accum_steps).backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
```

Not flagged: `i % N == 0` guarding a reset at the *start* of a window
(before `backward()`), `enumerate(x, start=1)` with `i % N == 0`, a counter
incremented before the check, `(i + 1) % N == 0` with a 0-based `i`,
`i % N == N - 1`, conditions that guard logging, evaluation or
checkpoints rather than the step, and a step that follows its own reset
inside the condition (WGAN's generator, updated every `n_critic` batches).

## Fix safety

Safe: the condition names both the counter and the count. The fix rewrites
`i % N == 0` to `(i + 1) % N == 0`, keeping the operand's spelling (in the
flag's assignment when a flag holds it); for the mirror bug it rewrites
`(i + 1) % N == 0` to `i % N == 0`. A counter of steps gets no fix.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterator

import libcst as cst

from torchlint.context import FileContext
from torchlint.model import ERROR, SAFE, Fix
from torchlint.names import dotted_name, int_value
from torchlint.rules import Example, Finding, Rule
from torchlint.training import windows


class OffByOneStep(Rule):
    code = "TL004"
    name = "off-by-one-accumulation-step"
    severity = ERROR
    summary = "accumulation step condition that first holds after 1 (or N - 1) micro-batches"

    def check(self, context: FileContext) -> Iterator[Finding]:
        for loop in context.loops:
            reported = set()
            for step in loop.optimizer_steps:
                for check in loop.accumulation_checks(step):
                    if check.kind != "modulo" or id(check.expression) in reported or loop.counter(check.counter):
                        continue
                    bumps = _advances_only_on_step(loop, check)
                    if bumps and any(loop.reaches(backward, step) for backward in loop.loop_backwards):
                        reported.add(id(check.expression))
                        yield self._stuck(context, loop, step, check, bumps[0])
                if not any(loop.precedes(backward, step) for backward in loop.loop_backwards):
                    continue
                for check in loop.accumulation_checks(step):
                    if check.kind != "modulo" or check.remainder != "zero" or id(check.expression) in reported:
                        continue
                    counter = loop.counter(check.counter)
                    first = loop.first_value(counter, check.read_at(step)) if counter is not None else None
                    if first is None or first + check.offset not in (0, 2):
                        continue
                    reported.add(id(check.expression))
                    finding = self._finding(context, step, check, counter, first + check.offset == 0)
                    run = loop.run_of(step, check)
                    yield replace(finding, timeline=run.lines() if run is not None else None)

    def _stuck(self, context, loop, step, check, bump) -> Finding:
        """The counter the window reads advances only when the optimizer steps."""
        name, count = check.counter, context.code(check.count)
        condition = context.code(check.guard.test if check.flag is not None else check.expression)
        held = f" (`{check.flag} = {context.code(check.expression)}`)" if check.flag is not None else ""
        run = _stuck_run(loop, step, check)
        if run is not None and not run.steps:
            outcome = (f"it starts where the condition is false, so `{step.receiver}` never steps while every "
                       f"micro-batch's gradients pile up")
        else:
            outcome = (f"once it has stepped, `{name}` stays on a value where the condition is false, so "
                       f"`{step.receiver}` never steps again while every micro-batch's gradients pile up")
        message = (
            f"`{step.receiver}.step()` runs when `{condition}`{held}, but `{name}` advances only when it steps "
            f"(`{context.code(bump.node)}`, line {context.site_line(bump)}): {outcome}. Count micro-batches, "
            f"not steps."
        )
        return Finding(check.expression, message, None, timeline=run.lines() if run is not None else None)

    def _finding(self, context, step, check, counter, zero_based: bool) -> Finding:
        name = check.counter
        count = context.code(check.count)
        condition = context.code(check.expression)
        when = f"`{condition}` is false" if check.negated else f"`{condition}`"
        if check.flag is not None:  # `if not is_accumulating:` with `is_accumulating = i % n != 0`
            when = f"`{context.code(check.guard.test)}` (`{check.flag} = {condition}`)"
        origin = f" (`{context.code(counter.origin)}`)" if counter.origin is not None else ""
        if counter.source == "manual":
            origin = " (it is incremented after this check)" if zero_based else " (it is incremented before this check)"
        # A count a resume restores: the first micro-batch is the fresh run's, and a resumed run keeps its windows.
        first_batch = "the first micro-batch of a fresh run" if counter.resumed else "the first micro-batch"
        if zero_based:
            message = (
                f"`{step.receiver}.step()` runs when {when}, but `{name}` is 0 on {first_batch}{origin}: the first update comes after 1 micro-batch instead of `{count}`, "
                f"and every later window is shifted by one."
            )
            replacement = f"({context.code(check.operand)} + 1)"
            title = f"Use `({name} + 1) % {count}`"
        else:
            message = (
                f"`{step.receiver}.step()` runs when {when}, but `{name}` is already 1 on {first_batch}{origin}: the first update comes after `{count} - 1` micro-batches."
            )
            replacement = context.code(_counter_side(check.operand))
            title = f"Use `{name} % {count}`"
        fix = Fix(SAFE, title, (context.replace(check.operand, replacement),))
        return Finding(check.expression, message, fix)

    valid = (
        # WGAN: the generator's own reset, backward and step every `n_critic` batches.
        """
for i, (imgs, _) in enumerate(dataloader):
    optimizer_D.zero_grad()
    loss_D = -torch.mean(discriminator(imgs)) + torch.mean(discriminator(generator(z()).detach()))
    loss_D.backward()
    optimizer_D.step()
    if i % n_critic == 0:
        optimizer_G.zero_grad()
        loss_G = -torch.mean(discriminator(generator(z())))
        loss_G.backward()
        optimizer_G.step()
""",
        """
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / n).backward()
    if (i + 1) % n == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        # `i % N == 0` guarding the reset at the start of a window.
        """
for i, (x, y) in enumerate(loader):
    if i % n == 0:
        optimizer.zero_grad()
    (criterion(model(x), y) / n).backward()
    if i % n == n - 1:
        optimizer.step()
""",
        """
for i, batch in enumerate(loader, start=1):
    train_step(batch).backward()
    if i % args.accum == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        # Counter incremented before the check.
        """
step = 0
for batch in loader:
    (model(batch).loss / accum).backward()
    step += 1
    if step % accum == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        # Logging, not stepping.
        """
for i, batch in enumerate(loader):
    loss = model(batch).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if i % log_every == 0:
        print(loss.item())
""",
    )
    invalid = (
        # `continue` until the window is full.
        Example(
            """
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / accum).backward()
    if i % accum:
        continue
    optimizer.step()
    optimizer.zero_grad()
""",
            line=4,
            fixed="""
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / accum).backward()
    if (i + 1) % accum:
        continue
    optimizer.step()
    optimizer.zero_grad()
""",
        ),
        Example(
            """
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / accum_steps).backward()
    if i % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            line=4,
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
for i, batch in enumerate(loader, start=1):
    (model(batch).loss / 8).backward()
    if (i + 1) % 8 == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            line=4,
            fixed="""
for i, batch in enumerate(loader, start=1):
    (model(batch).loss / 8).backward()
    if i % 8 == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        ),
        Example(
            """
global_step = 0
for batch in loader:
    loss = model(batch).loss / self.accum
    loss.backward()
    if not global_step % self.accum:
        self.optimizer.step()
        self.optimizer.zero_grad()
    global_step += 1
""",
            line=6,
            fixed="""
global_step = 0
for batch in loader:
    loss = model(batch).loss / self.accum
    loss.backward()
    if not (global_step + 1) % self.accum:
        self.optimizer.step()
        self.optimizer.zero_grad()
    global_step += 1
""",
        ),
    )


def _counter_side(operand: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(operand, cst.BinaryOperation):
        return operand.left if dotted_name(operand.left) is not None else operand.right
    return operand


def _advances_only_on_step(loop, check) -> list:
    """The updates of a window's counter when every one of them runs only where the step runs:
    `global_step += 1` in the step's branch, or `global_step += int(should_step)` with the flag the
    step's `if` tests. None when the counter also moves elsewhere or is a loop's target."""
    name = check.counter
    if name is None or any(d.kind == "target" for d in loop.reaching(name, check.read_at(check.guard.assume))):
        return []
    updates = [a for a in loop.assignments if a.target == name]
    if not updates:
        return []
    for update in updates:
        if update.depth != 0:
            return []
        if windows.is_increment(update) and loop.in_branch(update, check):
            continue
        if update.operator == "+=" and check.flag is not None and _is_flag(update.value, check.flag):
            continue
        return []
    return updates


def _is_flag(value, flag: str) -> bool:
    """`should_step`, `int(should_step)`."""
    if isinstance(value, cst.Call) and dotted_name(value.func) == "int" and len(value.args) == 1:
        value = value.args[0].value
    return dotted_name(value) == flag


def _stuck_run(loop, step, check):
    """The run of a window whose counter advances only on steps, from its start before the loop."""
    start = int_value(loop.known_value(check.counter)) if check.counter else None
    if start is None:
        return None
    return loop.run_on_steps(check, start)
