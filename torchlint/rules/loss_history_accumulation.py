"""TL008 loss-history-accumulation: a running total keeps every iteration's graph alive.

## What it does

Flags `total += loss` (or `total = total + loss`) in a training loop when
`total` starts as a number before the loop and `loss` is a tensor attached
to the graph: a loss passed to `backward()` in the loop, or the result of a
torch criterion, also through arithmetic (`loss * x.size(0)`) or a tensor
method that keeps the graph (`loss.mean()`, `loss.cpu()`), and through a
loss function or a loss module's `forward` of this file or another of the
project (`loss, cls_loss, loc_loss = criterion(...)` with `criterion =
DetectionLoss()`: each part that comes from a torch criterion), or the
loss a called function backpropagated and handed back (`loss, acc =
train_step(batch)` where `train_step` runs `loss.backward()` and returns
that `loss`, whatever computed it). A total
that starts as a tensor of its own (`torch.zeros(1, device=d).squeeze_()`,
`torch.tensor(0.0)`, not made with `requires_grad=True`) is flagged the same
way: the graph-attached term makes it hold every iteration's graph.

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
backpropagated (see TL001), in the loop or after it (`mean = total / n`,
then `mean.backward()`, `torch.autograd.grad(mean, params)` or
`scaler.scale(mean).backward()`: the graph the total holds is the loss), and a total reset whenever the optimizer steps
(`window_loss = 0` in the step's block): it holds at most one window of
graphs, not the history of the epoch. Nor a total set afresh for each batch
of an enclosing loop before a loop that repeats updates on that batch
(`for _ in range(n_critic):`, whose own values are not read): it holds one
batch's repetitions. A loop of steps that reads no value of the enclosing
iteration (`for epoch in range(n):` around `for idx in range(n_batch):
users = sampler.sample()`) draws a new batch each step: its total is flagged.

## Fix safety

For a total that starts as a tensor, the fix detaches the term
(`total += loss.detach()`) and is safe: the total keeps its value, dtype and
device for every use, and a total that is differentiated later is not
flagged at all. For a total that starts as a number, the fix is safe when
every later use of `total` takes a number: the fix adds
`.item()`, which turns the running total into a Python float and frees each
iteration's graph. Every use around the loop is read, also of the values
computed from it: printed, formatted, compared, rounded, written to a
TensorBoard `SummaryWriter` or a `logging` logger is fine for a float. No
fix is offered when a use needs a tensor (`total.item()`, `total.cpu()`,
`(total / n).detach()`, `average = total / n; average.item()`,
`torch.stack([total])`): a float has none of these. Unsafe when a use is not
shown to take a number: returned, kept in a list or a dict, handed to a
function of another package (`wandb.log({"loss": total})`) or of this file,
or an attribute (`self.total`) read in another method. A nested function
with a variable of the same name of its own (`def step(): loss = ...;
loss.backward()`) does not use the total's.
"""

from __future__ import annotations

import re
from typing import Iterator, List, Optional, Set, Tuple

import libcst as cst

from torchlint.context import FileContext
from torchlint.flow.scopes import comprehension_targets, names_bound_in, parameter_names
from torchlint.model import SAFE, UNSAFE, WARNING, Fix
from torchlint.names import ModuleNames, dotted_name
from torchlint.walk import children, preorder
from torchlint.rules import Example, Finding, Rule
from torchlint.training import Assignment, TrainingLoop
from torchlint.training.graph import GRAPH_KEEPING_METHODS, cuts
from torchlint.training.windows import is_number


class LossHistoryAccumulation(Rule):
    code = "TL008"
    name = "loss-history-accumulation"
    severity = WARNING
    summary = "a number accumulates a graph-attached loss across iterations"

    def check(self, context: FileContext) -> Iterator[Finding]:
        for loop in context.loops:
            for total, added, update in _history_accumulations(loop, context.names):
                uses = _total_uses(context, loop, total)
                if uses == DIFFERENTIATED:
                    continue  # the total is a loss built over the loop and backpropagated after it (TL001's)
                added_code = context.code(added)
                simple = isinstance(added, (cst.Name, cst.Attribute, cst.Call))
                if _fresh_tensor(loop.value_before_loop(total), context.names):
                    # A tensor total stays one: the detached term keeps its value, dtype and device for every use.
                    detached = f"{added_code}.detach()" if simple else f"({added_code}).detach()"
                    message = (
                        f"`{total}` adds up `{added_code}`, which is still attached to the graph: the tensor "
                        f"`{total}` then holds the graph of every iteration, and memory grows each batch. "
                        f"Accumulate `{detached}` instead."
                    )
                    yield Finding(update.node, message,
                                  Fix(SAFE, f"Use `{detached}`", (context.replace(added, detached),)))
                    continue
                item = f"{added_code}.item()" if simple else f"({added_code}).item()"
                message = (
                    f"`{total}` adds up `{added_code}`, which is still attached to the graph: `{total}` becomes "
                    f"a tensor holding the graph of every iteration, and memory grows each batch. "
                    f"Accumulate `{item}` instead."
                )
                fix = None
                if uses != TENSOR:
                    fix = Fix(SAFE if uses == NUMBER else UNSAFE, f"Use `{item}`", (context.replace(added, item),))
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
        # A total that starts as a tensor stays one: the term is detached.
        Example(
            """
import torch
total = torch.zeros(())
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    total += loss
print(total.item())
""",
            line=7,
            fixed="""
import torch
total = torch.zeros(())
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    total += loss.detach()
print(total.item())
""",
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
        start = loop.value_before_loop(total)
        if not (is_number(start) or _fresh_tensor(start, names)) or loop.carried(total) is None:
            continue
        if loop.grad_disabled_at(assignment, names) is not None or _reset_every_step(loop, total):
            continue
        if _repeats_one_batch(loop, total):
            continue
        if _attached_to_graph(loop, added, assignment, names, backward_losses):
            found.append((total, added, assignment))
    return found


# torch factories that make a new tensor, with no graph unless asked for one (`requires_grad=True`)
_TENSOR_FACTORIES = frozenset({"torch.zeros", "torch.tensor", "torch.scalar_tensor", "torch.zeros_like"})
# what a fresh tensor may go through and stay a fresh tensor of the same value
_KEEPING_FRESH = frozenset({"to", "cuda", "cpu", "float", "double", "half", "squeeze", "squeeze_", "view", "reshape"})


def _fresh_tensor(value: Optional[cst.BaseExpression], names: ModuleNames) -> bool:
    """`torch.zeros(1, device=device).squeeze_()`, `torch.tensor(0.0)`: a total that starts as a tensor of its own,
    which nothing differentiates (a graph-attached term added to it is all the graph it holds)."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value in _KEEPING_FRESH and names.qualify(value.func) is None:
        value = value.func.value
    if not isinstance(value, cst.Call) or names.callee(value) not in _TENSOR_FACTORIES:
        return False
    return not any(argument.keyword is not None and argument.keyword.value == "requires_grad"
                   for argument in value.args)


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
        around & set(map(id, nodes[definition.node].loops)) for definition in entering) \
        and _reads_enclosing_batch(loop, around)


def _reads_enclosing_batch(loop: TrainingLoop, around: Set[int]) -> bool:
    """The repeated body reads a value of an enclosing loop's iteration that it never rebinds (`real` of `for real
    in loader`, or `x` unpacked from it): the batch it repeats on. A body that reads none (`for epoch in
    range(n):` around `for idx in range(n_batch): users = sampler.sample()`) draws its data anew each time."""
    region = loop.iteration.region
    nodes = loop.flow.graph.nodes
    rebound = {definition.name for index in region.body for definition in nodes[index].definitions}
    read = {part.value for part in preorder(loop.node.body) if isinstance(part, cst.Name)} - rebound
    for name in sorted(read):
        entering = loop.flow.entering(region, name)
        if entering and all(around & set(map(id, nodes[definition.node].loops)) for definition in entering):
            return True
    return False


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
    if isinstance(added, cst.Name):
        # `loss, acc = train_step(batch)`: the loss the called function backpropagated and handed back
        reaching = loop.reaching(added.value, assignment)
        if reaching and all(loop.backpropagated_result(definition) for definition in reaching):
            return True
    origin = loop.origin(added, assignment, names)
    return bool(origin.reductions) and origin.reductions <= {"mean", "sum", "none", "configured"}


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


# What a later use of the total does with it, once the fix has made it a Python float.
NUMBER, TENSOR, UNKNOWN = "number", "tensor", "unknown"  # works on a float / needs a tensor / not shown
# ... and a use that differentiates it (`total.backward()`, `autograd.grad(total / n, params)`): the total is
# a loss made over the loop, whose graph is kept on purpose.
DIFFERENTIATED = "differentiated"
# torch functions that differentiate their first argument.
_DIFFERENTIATING = frozenset({"torch.autograd.grad", "torch.autograd.backward"})
# Builtins that take a float as well as a tensor and give something that is not the total any more.
_TAKE_NUMBERS = frozenset({"print", "float", "int", "str", "repr", "format", "bool", "isinstance"})
# Builtins whose result is the total again, or made from it: the use goes on with the result.
_KEEP_NUMBERS = frozenset({"abs", "round", "max", "min", "sum"})
# Packages whose functions take Python numbers (and any list of them).
_NUMBER_PACKAGES = ("math.", "numpy.", "statistics.", "logging.", "json.")
# torch functions that make a tensor from a number; every other torch function needs a tensor.
_FROM_NUMBERS = frozenset({"torch.tensor", "torch.as_tensor", "torch.scalar_tensor"})
_SUMMARY_WRITERS = ("torch.utils.tensorboard.SummaryWriter", "torch.utils.tensorboard.writer.SummaryWriter",
                    "tensorboardX.SummaryWriter")
_TARGETS = (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr, cst.AsName,
            cst.Del)


def _total_uses(context: FileContext, loop: TrainingLoop, total: str) -> str:
    """What the code around the loop does with `total` (and every name computed from it) once it is a float:
    TENSOR when some use needs a tensor (`total.item()`, `(total / n).detach()`, `avg.cpu()` after `avg =
    total / n`, `torch.stack([total])`), UNKNOWN when a use is not shown to take a number (returned, passed
    to a function of another library or of this file, kept in a list or a dict), NUMBER when every use takes
    one (printed, formatted, compared, added up, logged)."""
    if loop.function is None:
        scope = list(loop.enclosing[0][0]) if loop.enclosing else []  # the module, parsed whole
    elif "." not in total:
        scope = [loop.function.body]
    elif total.startswith("self.") and total.count(".") == 1 and not _named_elsewhere(context, loop, total[5:]):
        scope = [loop.function.body]  # `self.running_loss`, read in no other method
    else:
        return UNKNOWN  # another object's attribute (or read in other methods, which the parse may leave out)
    if not scope:
        return UNKNOWN
    return _uses_in(scope, total, context.names)


def _named_elsewhere(context: FileContext, loop: TrainingLoop, attribute: str) -> bool:
    """`attribute` occurs in the file's text outside the loop's function, other than where it is set
    (`self.running_loss = 0.0` in `__init__`). The text, not the tree: the parse may leave other methods out."""
    first, _, last, _ = context.span(loop.function)
    name = re.escape(attribute)
    setting = re.compile(rf"\bself\.{name}\s*(:[^=]*)?=(?!=)")
    mention = re.compile(rf"\b{name}\b")
    return any(mention.search(setting.sub("", line)) for number, line in enumerate(context.lines, start=1)
               if not first <= number <= last)


def _uses_in(scope: List[cst.CSTNode], name: str, names: ModuleNames) -> str:
    """The combined answer for every read of `name`, and of the names its value flows into, in `scope`."""
    pending, derived, answers = [name], {name}, set()
    while pending:
        current = pending.pop()
        for chain in _reads(scope, current):
            answer, targets = _use(chain, names)
            answers.add(answer)
            for target in targets:
                if target not in derived:
                    derived.add(target)
                    pending.append(target)
    if DIFFERENTIATED in answers:
        return DIFFERENTIATED
    if TENSOR in answers:
        return TENSOR
    return UNKNOWN if UNKNOWN in answers else NUMBER


def _reads(scope: List[cst.CSTNode], name: str) -> Iterator[List[cst.CSTNode]]:
    """Each read of `name` (`x` or `self.x`) in `scope`, as the chain of nodes from a statement down to it;
    assignments to it are not reads, nor are the names of a nested function that has its own variable so
    named (`loss` of `def step(): loss = ...; loss.backward()` is not the module's `loss`)."""
    head = name.split(".", 1)[0]
    stack: List[List[cst.CSTNode]] = [[statement] for statement in reversed(scope)]
    while stack:
        chain = stack.pop()
        node = chain[-1]
        if isinstance(node, (cst.Name, cst.Attribute)) and dotted_name(node) == name and _is_read(chain):
            yield chain
            continue
        if isinstance(node, _NESTED_SCOPES) and _own_variable(node, head):
            # what runs in the enclosing scope still reads its `name`: a function's decorators, a comprehension's
            # first iterable
            if isinstance(node, cst.FunctionDef):
                stack.extend(chain + [decorator] for decorator in reversed(node.decorators))
            elif not isinstance(node, cst.Lambda):
                stack.append(chain + [node.for_in, node.for_in.iter])
            continue
        stack.extend(chain + [child] for child in reversed(children(node)))


_NESTED_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def _own_variable(function: cst.CSTNode, name: str) -> bool:
    """`function` has a local variable `name` (a parameter, a comprehension's target, or bound in its body and not
    declared `global` or `nonlocal` there): its reads of `name` are not the enclosing scope's."""
    if isinstance(function, cst.Lambda):
        return name in parameter_names(function.params)
    if not isinstance(function, cst.FunctionDef):
        return name in comprehension_targets(function)
    if name not in names_bound_in(function):
        return False
    return not any(isinstance(node, (cst.Global, cst.Nonlocal)) and any(item.name.value == name for item in node.names)
                   for node in preorder(function.body))


def _is_read(chain: List[cst.CSTNode]) -> bool:
    node, parent = chain[-1], chain[-2] if len(chain) > 1 else None
    if isinstance(parent, cst.Attribute) and parent.attr is node:
        return False  # `other.total`
    if isinstance(parent, (cst.Arg, cst.Param, cst.FunctionDef, cst.ClassDef, cst.ImportAlias, cst.NameItem)) \
            and not (isinstance(parent, cst.Arg) and parent.value is node):
        return False  # `f(total=...)`, `def f(total)`, `global total`
    index = len(chain) - 1
    while index > 0:  # through `a, (total, b) = ...`
        parent = chain[index - 1]
        if isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
            index -= 1
            continue
        if isinstance(parent, _TARGETS):
            return getattr(parent, "target", getattr(parent, "name", None)) is not chain[index]
        return True
    return True


def _use(chain: List[cst.CSTNode], names: ModuleNames) -> Tuple[str, List[str]]:
    """(answer, names the value flows into) for one read, walking out through the expressions computed from
    it while they are still the total's value (arithmetic, `abs`, `round`, a conditional)."""
    index = len(chain) - 1
    container = False  # the value sits in a list, tuple or dict being built
    while index > 0:
        node, parent = chain[index], chain[index - 1]
        index -= 1
        if isinstance(parent, cst.BinaryOperation):
            if isinstance(parent.operator, cst.Modulo) and isinstance(parent.left, (cst.SimpleString,
                                                                                     cst.ConcatenatedString)):
                return NUMBER, []  # `"%.3f" % total`
            continue
        if isinstance(parent, (cst.UnaryOperation, cst.BooleanOperation)):
            continue
        if isinstance(parent, cst.IfExp):
            if parent.test is node:
                return NUMBER, []
            continue
        if isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.FormattedStringExpression, cst.Assert,
                               cst.If, cst.While)):
            return NUMBER, []  # compared, formatted, tested: a float does all that
        if isinstance(parent, (cst.Element, cst.StarredElement, cst.DictElement, cst.List, cst.Tuple, cst.Set,
                               cst.Dict)):
            container = True
            continue
        if isinstance(parent, cst.Expr):
            return NUMBER, []
        if isinstance(parent, cst.Arg):
            continue  # the call it is passed to decides, one step out
        if isinstance(parent, cst.Call):
            if parent.func is node:
                return TENSOR, []  # `total(...)`
            if not container and _differentiates(parent, node, names):
                return DIFFERENTIATED, []
            answer = _passed(parent, names, container)
            if answer != "keeps":
                return answer, []
            container = False
            continue
        if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and parent.value is node:
            targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
            bound = [dotted_name(target) for target in targets]
            if container or any(b is None for b in bound):
                return UNKNOWN, []  # kept in a list, unpacked: where it goes is not followed
            return NUMBER, bound
        if isinstance(parent, cst.NamedExpr) and parent.value is node:
            bound = dotted_name(parent.target)
            return (NUMBER, [bound]) if bound is not None and not container else (UNKNOWN, [])
        if isinstance(parent, cst.Attribute) and parent.value is node and not container \
                and parent.attr.value == "backward" and index > 0 and isinstance(chain[index - 1], cst.Call) \
                and chain[index - 1].func is parent:
            return DIFFERENTIATED, []  # `total.backward()`, `(total / n).backward()`
        if isinstance(parent, (cst.Attribute, cst.Subscript)) and parent.value is node and not container:
            return TENSOR, []  # `total.item()`, `(total / n).detach()`, `total[0]`: a float has none of these
        return UNKNOWN, []  # returned, yielded, iterated, used as an index...
    return UNKNOWN, []


def _differentiates(call: cst.Call, argument: cst.CSTNode, names: ModuleNames) -> bool:
    """`call` differentiates what it is given as `argument` (the `Arg` holding the total's value): the first
    argument of `torch.autograd.grad` / `torch.autograd.backward`, or the one argument of a `backward` method
    of another object (`accelerator.backward(total)`); `scaler.scale(total)` hands it on, and the use goes on."""
    if not isinstance(argument, cst.Arg) or not call.args or call.args[0] is not argument:
        return False
    if names.qualify(call.func) in _DIFFERENTIATING:
        return argument.keyword is None or argument.keyword.value in ("outputs", "tensors")
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward" and len(call.args) == 1 \
        and argument.keyword is None


def _passed(call: cst.Call, names: ModuleNames, container: bool) -> str:
    """What `call` does with the total (or a list holding it) passed to it: NUMBER, TENSOR, UNKNOWN (a
    function of another library, or of this file: what it does is not followed), or "keeps" when its result
    is made from the total and the use goes on with it (`round(total, 4)`)."""
    func = call.func
    callee = dotted_name(func) or ""
    qualified = names.qualify(func) or ""
    if isinstance(func, cst.Attribute) and func.attr.value == "format" and isinstance(
            func.value, (cst.SimpleString, cst.ConcatenatedString)):
        return NUMBER  # `"{:.3f}".format(total)`
    if not qualified and callee in _TAKE_NUMBERS:
        return NUMBER
    if not qualified and callee in _KEEP_NUMBERS:
        return "keeps"
    if isinstance(func, cst.Attribute) and func.attr.value == "scale" and len(call.args) == 1 and not container:
        return "keeps"  # `scaler.scale(total)`: the total times a number, still a tensor of the graph
    if qualified.startswith(_NUMBER_PACKAGES) or qualified in _FROM_NUMBERS:
        return NUMBER
    if qualified.startswith("torch."):
        return TENSOR  # `torch.stack([total])`, `dist.all_reduce(total)`: a float is not a tensor
    if isinstance(func, cst.Attribute):
        receiver = dotted_name(func.value)
        constructors = names.constructors_of(receiver) if receiver is not None else []
        if any(c in _SUMMARY_WRITERS for c in constructors) and func.attr.value in ("add_scalar", "add_scalars"):
            return NUMBER
        if any(c.startswith("logging.") for c in constructors):
            return NUMBER  # `logger.info("%.3f", total)`
    return UNKNOWN
