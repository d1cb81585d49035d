"""TL008 loss-history-accumulation: a running total keeps every iteration's graph alive.

## What it does

Flags `total += loss` (or `total = total + loss`) in a training loop when
`total` starts as a number before the loop and `loss` is a tensor attached
to the graph: a loss passed to `backward()` in the loop, or the result of a
torch criterion, also through arithmetic (`loss * x.size(0)`) or a tensor
method that keeps the graph (`loss.mean()`, `loss.cpu()`).

## Why is this bad?

Adding a graph-attached tensor to a number makes `total` a tensor whose
history holds the graph of every iteration so far (PyTorch's FAQ: "Don't
accumulate history across your training loop"). Memory grows with every
batch until the process runs out of it, and all that was wanted was a number
to log.

## Example

```python
running_loss = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    running_loss += loss
```

## Use instead

```python
running_loss = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    running_loss += loss.item()
```

Not flagged: `loss.item()` (also `loss.item() * x.size(0)`), `float(loss)`,
`loss.detach()` (and `.detach().cpu()`), counts of correct predictions
(`(logits.argmax(1) == y).sum()`), totals inside `torch.no_grad()` or
`torch.inference_mode()`, the loss accumulator that is itself
backpropagated (see TL001), and a total reset whenever the optimizer steps
(`window_loss = 0` in the step's block): it holds at most one window of
graphs, not the history of the epoch. Nor a total set afresh for each batch
of an enclosing loop before a loop that repeats updates on that batch
(`for _ in range(n_critic):`, whose own values are not read): it holds one
batch's repetitions.

## Fix safety

Safe when `total` is only used as a number: the fix adds `.item()`, which
turns the running total into a Python float and frees each iteration's
graph. No fix is offered when the code later uses `total` as a tensor
(`total.item()`, `total.backward()`), also through a value computed from it
(`average = total / n; average.item()`).
"""

from __future__ import annotations

from typing import Iterator, List, Optional, Set, Tuple

import libcst as cst

from torchlint.context import FileContext
from torchlint.model import SAFE, WARNING, Fix
from torchlint.flow.scopes import reads
from torchlint.names import ModuleNames, dotted_name, iter_names
from torchlint.walk import preorder
from torchlint.rules import Example, Finding, Rule
from torchlint.training import Assignment, TrainingLoop
from torchlint.training.graph import GRAPH_KEEPING_METHODS, cuts
from torchlint.training.loop import uses_attribute_of
from torchlint.training.windows import is_number


class LossHistoryAccumulation(Rule):
    code = "TL008"
    name = "loss-history-accumulation"
    severity = WARNING
    summary = "a number accumulates a graph-attached loss across iterations"

    def check(self, context: FileContext) -> Iterator[Finding]:
        for loop in context.loops:
            for total, added, update in _history_accumulations(loop, context.names):
                added_code = context.code(added)
                message = (
                    f"`{total}` adds up `{added_code}`, which is still attached to the graph: `{total}` becomes "
                    f"a tensor holding the graph of every iteration, and memory grows each batch. "
                    f"Accumulate `{added_code}.item()` instead."
                )
                fix = None
                if not _used_as_tensor(loop, total):
                    item = f"{added_code}.item()" if isinstance(added, (cst.Name, cst.Attribute, cst.Call)) \
                        else f"({added_code}).item()"
                    fix = Fix(SAFE, f"Use `{item}`", (context.replace(added, item),))
                yield Finding(update.node, message, fix)

    valid = (
        """
total = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    total += loss.item()
""",
        """
total = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    total += loss.detach().cpu()
    seen = seen + float(loss)
""",
        # Evaluation under no_grad: nothing is attached to a graph.
        """
import torch
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    with torch.no_grad():
        val_total = 0
        val_total += criterion(model(vx), vy)
""",
        # Weighted by the batch size, detached first; a count of correct predictions.
        """
total, correct = 0.0, 0
for x, y in loader:
    logits = model(x)
    loss = criterion(logits, y)
    loss.backward()
    total += loss.item() * x.size(0)
    correct += (logits.argmax(1) == y).sum()
""",
        # The accumulator that is backpropagated is TL001's business.
        """
loss = 0
for out in outputs:
    loss += criterion(out, y)
    loss.backward()
""",
    )
    invalid = (
        # The total is read as a tensor through the average made from it: `.item()` there would fail, so no fix.
        Example(
            """
running_loss = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    running_loss += loss
average = running_loss / len(loader)
print(average.item())
""",
            line=8,
        ),
        # Two steps away: `percent` is computed from `average`, computed from the total.
        Example(
            """
running_loss = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    running_loss += loss
average = running_loss / len(loader)
percent = average * 100
print(percent.item())
""",
            line=8,
        ),
        Example(
            """
running_loss = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    running_loss += loss
print(running_loss / len(loader))
""",
            line=8,
            fixed="""
running_loss = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    running_loss += loss.item()
print(running_loss / len(loader))
""",
        ),
        Example(
            """
import torch.nn.functional as F
epoch_loss = 0
for x, y in loader:
    out = model(x)
    F.cross_entropy(out, y).backward()
    epoch_loss = epoch_loss + F.cross_entropy(out, y)
""",
            line=7,
            fixed="""
import torch.nn.functional as F
epoch_loss = 0
for x, y in loader:
    out = model(x)
    F.cross_entropy(out, y).backward()
    epoch_loss = epoch_loss + F.cross_entropy(out, y).item()
""",
        ),
        Example(
            """
total = 0
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    total += loss
print(total.item())
""",
            line=6,
        ),
        # Weighted by the batch size: the product is still attached.
        Example(
            """
epoch_loss, seen = 0.0, 0
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    epoch_loss += loss * x.size(0)
    seen += x.size(0)
""",
            line=6,
            fixed="""
epoch_loss, seen = 0.0, 0
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    epoch_loss += (loss * x.size(0)).item()
    seen += x.size(0)
""",
        ),
    )



def _history_accumulations(loop: TrainingLoop, names: ModuleNames) -> List[Tuple[str, cst.BaseExpression, Assignment]]:
    """(total, added, update) for `total += loss` where `total` starts as a number before the loop
    and carries the sum from one iteration into the next, with no reset at every update."""
    backward_losses = {b.loss_name for b in loop.backwards if b.loss_name and b.via is None}
    found = []
    for assignment in loop.assignments:
        added = _added_term(assignment)
        total = assignment.target
        if added is None or total in backward_losses:
            continue
        if not is_number(loop.value_before_loop(total)) or loop.carried(total) is None:
            continue
        if loop.grad_disabled_at(assignment, names) is not None or _reset_every_step(loop, total):
            continue
        if _repeats_one_batch(loop, total):
            continue
        if _attached_to_graph(loop, added, assignment, names, backward_losses):
            found.append((total, added, assignment))
    return found


def _reset_every_step(loop: TrainingLoop, total: str) -> bool:
    """`window_loss = 0` wherever the optimizer steps: the total holds one window at most."""
    resets = [a for a in loop.assignments if a.target == total and not a.reads_target]
    return any(loop.runs_whenever(reset, step) for reset in resets for step in loop.optimizer_steps)


def _repeats_one_batch(loop: TrainingLoop, total: str) -> bool:
    """`for _ in range(n_critic):` repeating updates on the batch of an enclosing loop, with the total set
    afresh before it on every iteration of that loop (`loss_d_sum = 0.0`): it holds the terms of one batch's
    repetitions, and memory does not grow with the data."""
    node = loop.node
    if not isinstance(node, cst.For) or loop.framework is not None:
        return False
    if any(isinstance(part, cst.Call) and dotted_name(part.func) == "next" for part in preorder(node.body)):
        return False  # `x, y = next(it)`: each repetition draws a new batch
    nodes = loop.flow.graph.nodes
    binds = [definition for index in loop.iteration.region.body for definition in nodes[index].definitions
             if definition.kind == "target" and definition.syntax is node]
    if not binds or any(loop.read_later(definition.name, definition.node) for definition in binds):
        return False  # the loop's own values feed the body: it runs over data
    around = {id(statement) for statement in nodes[loop.iteration.region.head].loops if statement is not node}
    entering = loop.flow.entering(loop.iteration.region, total)
    return bool(entering) and bool(around) and all(
        around & set(map(id, nodes[definition.node].loops)) for definition in entering)


def _attached_to_graph(loop: TrainingLoop, added: cst.BaseExpression, assignment: Assignment, names: ModuleNames,
                       backward_losses: Set[str]) -> bool:
    """A graph-attached tensor reaches `added` through arithmetic or graph-keeping tensor methods:
    `loss * x.size(0)`, `loss.mean()`; `loss.item() * n`, `float(loss)` and `loss.detach()` do not."""
    if isinstance(added, cst.BinaryOperation):
        return any(_attached_to_graph(loop, side, assignment, names, backward_losses)
                   for side in (added.left, added.right))
    if isinstance(added, cst.UnaryOperation):
        return _attached_to_graph(loop, added.expression, assignment, names, backward_losses)
    if (isinstance(added, cst.Call) and isinstance(added.func, cst.Attribute)
            and added.func.attr.value in GRAPH_KEEPING_METHODS and names.qualify(added.func) is None):
        return _attached_to_graph(loop, added.func.value, assignment, names, backward_losses)
    name = dotted_name(added)
    if name in backward_losses:
        # The backpropagated loss, unless every value reaching here was cut from its graph
        # (`loss = loss.detach().cpu().numpy()` after the backward, then `total += loss`).
        reaching = loop.reaching(name, assignment)
        return not reaching or not all(cuts(definition, names) for definition in reaching)
    origin = loop.origin(added, assignment, names)
    return bool(origin.reductions) and origin.reductions <= {"mean", "sum", "none"}


def _added_term(assignment: Assignment) -> Optional[cst.BaseExpression]:
    """`loss` in `total += loss` or `total = total + loss`."""
    if assignment.operator == "+=":
        return assignment.value
    value = assignment.value
    if assignment.operator == "=" and isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
        if dotted_name(value.left) == assignment.target:
            return value.right
        if dotted_name(value.right) == assignment.target:
            return value.left
    return None


def _used_as_tensor(loop: TrainingLoop, name: str) -> bool:
    """`name.item()`, `name.backward()`... anywhere in the function (or module) around the loop, also through a
    name computed from it (`avg = total / n; avg.item()`)."""
    if not loop.enclosing:
        return False
    statements = loop.enclosing[0][0]
    assignments = [(targets, value) for statement in statements for part in preorder(statement)
                   for targets, value in [_assigned(part)] if value is not None]
    derived = {name}
    grown = True
    while grown:  # `average = total / n`, then `percent = average * 100`: every name computed from it
        grown = False
        for targets, value in assignments:
            if not set(targets) <= derived and any(reads(value, used) for used in derived):
                derived.update(targets)
                grown = True
    return any(uses_attribute_of(statement, used) for statement in statements for used in derived)


def _assigned(part: cst.CSTNode) -> Tuple[List[str], Optional[cst.BaseExpression]]:
    """The names an assignment binds and the value it reads (`x = v`, `x: T = v`, `x += v`, `(x := v)`)."""
    if isinstance(part, cst.Assign):
        return [name for target in part.targets for name in iter_names(target.target)], part.value
    if isinstance(part, (cst.AnnAssign, cst.AugAssign)) and part.value is not None:
        return list(iter_names(part.target)), part.value
    if isinstance(part, cst.NamedExpr):
        return list(iter_names(part.target)), part.value
    return [], None
