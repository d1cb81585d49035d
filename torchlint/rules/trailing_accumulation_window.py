"""TL010 trailing-accumulation-window: the last, partial accumulation window is never applied.

## What it does

Flags the step condition of a gradient-accumulation loop when it cannot hold
on the last micro-batch of the loop (`(i + 1) % N == 0` with `i` from
`enumerate(loader)`, or `i % N == 0` with a 1-based `i`) and nothing after
the loop flushes the gradients that are left (`optimizer.step()` after the
loop).

## Why is this bad?

When the number of micro-batches is not a multiple of `N`, the last few
micro-batches of the epoch add their gradients to `.grad` and the loop ends
before the step. Those gradients are never applied in this epoch; worse,
since nothing resets them, they leak into the first window of the next
epoch, which then steps on more than `N` micro-batches.

## Example

```python
for epoch in range(epochs):
    for i, (x, y) in enumerate(loader):
        (criterion(model(x), y) / accum_steps).backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
```

## Use instead

```python
for epoch in range(epochs):
    for i, (x, y) in enumerate(loader):
        (criterion(model(x), y) / accum_steps).backward()
        if (i + 1) % accum_steps == 0 or (i + 1) == len(loader):
            optimizer.step()
            optimizer.zero_grad()
```

Not flagged: a flush after the loop (`optimizer.step()` following it), a
condition that already mentions the loop's length (`or i + 1 == len(loader)`,
also through a name: `last_batch = batch_idx == len(loader) - 1`),
iterables whose length is a known multiple of `N` (`range(64)` with `N = 8`,
`range(N * updates)`), and endless iterables (`enumerate(itertools.cycle(loader))`).

## Fix safety

Unsafe: whether the partial window should be applied (scaled by `1/N`, as
the fix does) or dropped is a training decision, and the extra step changes
how many optimizer steps an epoch takes (which a scheduler may count). The
fix adds `or (i + 1) == len(<iterable>)` to the condition (to a
`if (i + 1) % N != 0: continue` it adds `and (i + 1) != len(<iterable>)`); it
is offered only when the iterable can be measured with `len()`.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from torchlint.context import FileContext
from torchlint.model import UNSAFE, WARNING, Fix
from torchlint.rules import Example, Finding, Rule


class TrailingAccumulationWindow(Rule):
    code = "TL010"
    name = "trailing-accumulation-window"
    severity = WARNING
    summary = "accumulation whose last partial window is never stepped"

    def check(self, context: FileContext) -> Iterator[Finding]:
        for loop in context.loops:
            for step, check, counter in loop.trailing_windows():
                if loop.flushed_after(step.receiver):
                    continue
                iterable = counter.iterable
                count = context.code(check.count)
                condition = check.guard.test
                # `if (i + 1) % n != 0: continue` (or its `else`) skips the step while its test holds.
                blocks = "is still true" if check.negated else "cannot hold"
                message = (
                    f"`{context.code(condition)}` {blocks} on the last micro-batch, and nothing after "
                    f"the loop calls `{step.receiver}.step()`: when the number of micro-batches is not a "
                    f"multiple of `{count}`, the last window's gradients are never applied and leak into the "
                    f"next epoch's first update."
                )
                fix = None
                if isinstance(iterable, (cst.Name, cst.Attribute)):
                    length = f"len({context.code(iterable)})"
                    last = f"({counter.name} + 1)" if counter.start == 0 else counter.name
                    if check.negated:
                        title = f"Do not skip the step on the last micro-batch (`{last} != {length}`)"
                        rewritten = f"{_grouped(context, condition, cst.Or)} and {last} != {length}"
                    else:
                        title = f"Also step on the last micro-batch (`{last} == {length}`)"
                        rewritten = f"{_grouped(context, condition, cst.And)} or {last} == {length}"
                    fix = Fix(UNSAFE, title, (context.replace(condition, rewritten),))
                yield Finding(check.expression, message, fix)

    valid = (
        """
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / n).backward()
    if (i + 1) % n == 0 or (i + 1) == len(loader):
        optimizer.step()
        optimizer.zero_grad()
""",
        # Flushed after the loop.
        """
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / n).backward()
    if (i + 1) % n == 0:
        optimizer.step()
        optimizer.zero_grad()
optimizer.step()
optimizer.zero_grad()
""",
        # The length is a known multiple of the count.
        """
for i in range(64):
    (criterion(model(xs[i]), ys[i]) / 8).backward()
    if (i + 1) % 8 == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        # The last batch is named through the `range` bound.
        """
for b in range(1, num_batches + 1):
    (criterion(model(xs[b]), ys[b]) / n).backward()
    if b % n == 0 or b == num_batches:
        optimizer.step()
        optimizer.zero_grad()
""",
        # No accumulation.
        """
for x, y in loader:
    criterion(model(x), y).backward()
    optimizer.step()
    optimizer.zero_grad()
""",
        # The last batch, named before the step's condition.
        """
last_idx = len(loader) - 1
for batch_idx, (x, y) in enumerate(loader):
    last_batch = batch_idx == last_idx
    (criterion(model(x), y) / n).backward()
    if (batch_idx + 1) % n == 0 or last_batch:
        optimizer.step()
        optimizer.zero_grad()
""",
        # A multiple of the count by construction; an endless stream.
        """
import itertools
for step in range(n * updates):
    (criterion(model(xs[step]), ys[step]) / n).backward()
    if (step + 1) % n == 0:
        optimizer.step()
        optimizer.zero_grad()
for i, (x, y) in enumerate(itertools.cycle(loader)):
    (criterion(model(x), y) / n).backward()
    if (i + 1) % n == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
    )
    invalid = (
        Example(
            """
for epoch in range(epochs):
    for i, (x, y) in enumerate(loader):
        (criterion(model(x), y) / accum_steps).backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
            line=5,
            fixed="""
for epoch in range(epochs):
    for i, (x, y) in enumerate(loader):
        (criterion(model(x), y) / accum_steps).backward()
        if (i + 1) % accum_steps == 0 or (i + 1) == len(loader):
            optimizer.step()
            optimizer.zero_grad()
""",
            unsafe=True,
        ),
        Example(
            """
for step, batch in enumerate(train_dataloader, start=1):
    loss = model(**batch).loss / args.gradient_accumulation_steps
    loss.backward()
    if step % args.gradient_accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            line=5,
            fixed="""
for step, batch in enumerate(train_dataloader, start=1):
    loss = model(**batch).loss / args.gradient_accumulation_steps
    loss.backward()
    if step % args.gradient_accumulation_steps == 0 or step == len(train_dataloader):
        optimizer.step()
        optimizer.zero_grad()
""",
            unsafe=True,
        ),
        # The step is skipped with `continue` until the window is full.
        Example(
            """
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / n).backward()
    if (i + 1) % n != 0:
        continue
    optimizer.step()
    optimizer.zero_grad()
""",
            line=4,
            fixed="""
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / n).backward()
    if (i + 1) % n != 0 and (i + 1) != len(loader):
        continue
    optimizer.step()
    optimizer.zero_grad()
""",
            unsafe=True,
        ),
        Example(
            """
for i, batch in enumerate(tqdm(batches())):
    (model(batch).loss / 4).backward()
    if (i + 1) % 4 == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            line=4,
        ),
        # The progress bar is built before the loop.
        Example(
            """
pbar = tqdm(enumerate(loader), total=len(loader))
for i, (x, y) in pbar:
    (criterion(model(x), y) / n).backward()
    if (i + 1) % n == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            line=5,
            fixed="""
pbar = tqdm(enumerate(loader), total=len(loader))
for i, (x, y) in pbar:
    (criterion(model(x), y) / n).backward()
    if (i + 1) % n == 0 or (i + 1) == len(loader):
        optimizer.step()
        optimizer.zero_grad()
""",
            unsafe=True,
        ),
    )


def _grouped(context: FileContext, condition: cst.BaseExpression, binds_looser: type) -> str:
    """The condition's code, parenthesised when its operator binds looser than the one added."""
    code = context.code(condition)
    if isinstance(condition, cst.BooleanOperation) and isinstance(condition.operator, binds_looser):
        return f"({code})"
    return code
