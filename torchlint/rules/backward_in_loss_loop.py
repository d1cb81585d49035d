"""TL001 backward-in-loss-loop: `loss.backward()` inside the loop that accumulates `loss`.

## What it does

Flags a `backward()` call on a loss accumulator (`loss += f(...)` or
`loss = loss + f(...)`) made inside the same loop that accumulates it.

## Why is this bad?

The accumulator's graph contains every earlier term. The second `backward()`
walks back into the first term's graph, whose buffers the first call freed:
`RuntimeError: Trying to backward through the graph a second time`. Adding
`retain_graph=True` silences the error but is worse: the first term's
gradient is added once per remaining iteration, so the model trains on a
silently wrong gradient while the graph keeps growing in memory.

## Example

```python
loss = 0
for head_output in outputs:
    loss += criterion(head_output, target)
    loss.backward()
optimizer.step()
```

## Use instead

```python
loss = 0
for head_output in outputs:
    loss += criterion(head_output, target)
loss.backward()
optimizer.step()
```

Or, to keep one graph alive at a time, call `backward()` on each fresh term
(`term = criterion(...); term.backward()`): gradients add up the same way.

## Fix safety

Safe. The fix moves the `backward()` call to just after the loop, at the
loop's indentation, and drops a `retain_graph=True` it carried: the sum's
gradient is then computed once, which is what the accumulation means. It is
offered only when the call is a statement of its own in the loop body and
the loop does not also step an optimizer.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from torchlint.context import FileContext
from torchlint.model import ERROR, SAFE, Fix
from torchlint.rules import Example, Finding, Rule


class BackwardInLossLoop(Rule):
    code = "TL001"
    name = "backward-in-loss-loop"
    severity = ERROR
    summary = "`backward()` on a loss accumulator inside the loop that accumulates it"

    def check(self, context: FileContext) -> Iterator[Finding]:
        for loop in context.loops:
            for backward in (loop.own_backwards if loop.framework is None else ()):
                name = backward.loss_name
                accumulation = loop.backward_on_accumulator(backward)
                if accumulation is None:
                    continue
                term = context.code(accumulation.value) if accumulation.value is not None else "a term"
                retained = backward.retain_graph is not None
                consequence = (
                    "with `retain_graph=True` the earlier terms' gradients are added again on every "
                    "iteration and the graph keeps growing"
                    if retained
                    else "the second call backpropagates through the first term's freed graph: "
                    "RuntimeError 'Trying to backward through the graph a second time'"
                )
                # `if i % n == 0: loss = 0` restarts the sum per window: the sum is complete at its end.
                windowed = any(a.target == name and not a.reads_target for a in loop.assignments)
                where = "once per window, where the sum is complete" if windowed else "once, after the loop"
                message = (
                    f"`{name}.backward()` runs inside the loop that accumulates `{name}` "
                    f"(`{name} {accumulation.operator} {term}`): {consequence}. Call it {where}."
                )
                yield Finding(backward.node, message, self._fix(context, loop, backward, name))

    def _fix(self, context, loop, backward, name):
        if backward.guards or not backward.on_own_line or backward.kind != "tensor" or loop.optimizer_steps:
            return None
        call = context.code(backward.node)
        if backward.retain_graph is not None:
            call = context.code(backward.node.with_changes(args=_without(backward.node.args, backward.retain_graph)))
        edits = (
            context.delete_lines(backward.statement),
            context.insert_line_after(loop.node, call, indent=context.indent_of(loop.node)),
        )
        return Fix(SAFE, f"Move `{name}.backward()` after the loop", edits)

    valid = (
        # A fresh loss each iteration: the per-term backward that saves memory.
        """
for x, y in loader:
    out = model(x)
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
""",
        # Backward on the accumulator after the loop.
        """
loss = 0
for j in range(len(output)):
    loss += criterion(output[j], target)
loss.backward()
""",
        # Re-initialised at the top of each iteration: not carried.
        """
for batch in loader:
    loss = 0
    loss += criterion(model(batch.x), batch.y)
    loss += 0.1 * reg(model)
    loss.backward()
""",
        # Summed over a window and reset right after the backward.
        """
loss = 0
for i, (x, y) in enumerate(loader):
    loss = loss + criterion(model(x), y)
    if (i + 1) % 4 == 0:
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        loss = 0
""",
        # Running total for logging, backward on the per-step loss.
        """
total = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    total += loss.item()
    loss.backward()
""",
    )
    invalid = (
        # Reset only at the start of each window: carried between the resets.
        Example(
            """
for i, (x, y) in enumerate(loader):
    if i % accum == 0:
        window_loss = 0
    window_loss = window_loss + criterion(model(x), y) / accum
    window_loss.backward()
    if (i + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            line=6,
        ),
        Example(
            """
loss = 0
for j in range(len(output)):
    loss += criterion(output[j], target_var)
    loss.backward()
print(loss)
""",
            line=5,
            fixed="""
loss = 0
for j in range(len(output)):
    loss += criterion(output[j], target_var)
loss.backward()
print(loss)
""",
        ),
        Example(
            """
def train(model, heads, x, y):
    total = torch.zeros(())
    for head in heads:
        total = total + F.mse_loss(head(model(x)), y)
        total.backward(retain_graph=True)
""",
            line=6,
            fixed="""
def train(model, heads, x, y):
    total = torch.zeros(())
    for head in heads:
        total = total + F.mse_loss(head(model(x)), y)
    total.backward()
""",
        ),
        Example(
            """
loss = 0
for x, y in loader:
    loss += criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
""",
            line=5,
        ),
    )


def _without(args, removed):
    kept = [arg for arg in args if arg is not removed]
    if kept:
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return kept
