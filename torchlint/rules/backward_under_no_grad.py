"""TL011 backward-under-no-grad: `backward()` on a loss computed with gradients disabled.

## What it does

Flags `backward()` in a training loop when the loss was computed inside
`with torch.no_grad():`, `with torch.inference_mode():` or
`with torch.set_grad_enabled(False):`, or in a function decorated with
`@torch.no_grad()` / `@torch.inference_mode()` — or computed after the block,
but only from what the block computed: `loss = outputs.loss` on outputs of
a forward pass under `inference_mode()`, or `F.kl_div(...)` of student and
teacher logits that were both computed under `no_grad()` (with torch
functions, loss modules, numbers and the loop's data, nothing that could
hold parameters).

## Why is this bad?

Nothing computed with gradients disabled is recorded in the graph, so the
loss has no `grad_fn` and `backward()` fails with "element 0 of tensors does
not require grad and does not have a grad_fn" — usually after the data
loading and the first forward pass, on a GPU job that waited in a queue for
hours. The evaluation code was probably copied into the training loop, or a
decorator meant for `evaluate()` ended up on `train()`.

## Example

```python
for x, y in loader:
    with torch.no_grad():
        loss = criterion(model(x), y)
        loss.backward()
    optimizer.step()
```

## Use instead

```python
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
```

Not flagged: a loss computed before entering the block (its graph exists;
only the code inside the block is not recorded); a loss that mixes a target
computed under `no_grad()` with a model's output computed outside it (DQN's
TD target, a teacher's logits); `torch.set_grad_enabled(phase == "train")`;
`with torch.enable_grad():` inside a `no_grad` function.

## Fix safety

No fix: which computation was meant to be recorded is a decision only the
author can make. Move the forward pass and the loss out of the no-grad
block, or remove the decorator from the training function.
"""

from __future__ import annotations

from typing import Iterator, List, Optional, Set, Tuple

import libcst as cst

from torchlint.context import FileContext
from torchlint.model import ERROR
from torchlint.names import ModuleNames, dotted_name, int_value, iter_names, prefixes
from torchlint.rules import Example, Finding, Rule
from torchlint.training import BackwardSite, TrainingLoop
from torchlint.training.graph import TENSOR_METHODS
from torchlint.training.windows import is_number


class BackwardUnderNoGrad(Rule):
    code = "TL011"
    name = "backward-under-no-grad"
    severity = ERROR
    summary = "`backward()` on a loss computed with gradients disabled"

    def check(self, context: FileContext) -> Iterator[Finding]:
        for loop in context.loops:
            for backward in loop.own_backwards:
                if backward.loss is None:
                    continue
                disabled = _computed_without_grad(loop, backward, context.names)
                if disabled is None:
                    continue
                loss = context.code(backward.loss)
                message = (
                    f"`{loss}` is computed under `{context.code(disabled)}`, so it has no graph: "
                    f"`{context.site_code(backward)}` fails with \"element 0 of tensors does not require grad "
                    f"and does not have a grad_fn\". Compute the loss with gradients enabled."
                )
                yield Finding(backward.node, message)

    valid = (
        """
import torch
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        val = criterion(model(vx), vy)
""",
        # Loss computed before the block: the graph exists.
        """
import torch
for x, y in loader:
    loss = criterion(model(x), y)
    with torch.no_grad():
        ema.update(model)
        loss.backward()
    optimizer.step()
""",
        """
import torch
@torch.no_grad()
def evaluate(model, loader):
    return sum(criterion(model(x), y).item() for x, y in loader)

for x, y in loader:
    criterion(model(x), y).backward()
    optimizer.step()
""",
        # Only the target is computed without gradients; the prediction has its graph.
        """
import torch
import torch.nn.functional as F
for s, a, r, s2 in replay:
    with torch.no_grad():
        target = r + gamma * target_net(s2).max(1).values
    q = policy_net(s).gather(1, a).squeeze(1)
    F.smooth_l1_loss(q, target).backward()
    optimizer.step()
""",
    )
    invalid = (
        Example(
            """
import torch
for x, y in loader:
    with torch.no_grad():
        loss = criterion(model(x), y)
        loss.backward()
    optimizer.step()
""",
            line=6,
        ),
        Example(
            """
from torch import inference_mode
@inference_mode()
def train_epoch(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()
""",
            line=7,
        ),
        Example(
            """
import torch
for batch in loader:
    with torch.set_grad_enabled(False):
        outputs = model(**batch)
    outputs.loss.backward()
    optimizer.step()
""",
            line=6,
        ),
        # Read after the block from what the block computed.
        Example(
            """
import torch
for batch in loader:
    with torch.inference_mode():
        outputs = model(**batch)
        metric.add_batch(predictions=outputs.logits.argmax(-1))
    loss = outputs.loss
    loss.backward()
    optimizer.step()
""",
            line=8,
        ),
        # The student's logits went into the teacher's block: the loss has no graph.
        Example(
            """
import torch
import torch.nn.functional as F
def distill(student, teacher, loader, optimizer, T=2.0):
    for x, y in loader:
        with torch.no_grad():
            teacher_logits = teacher(x)
            student_logits = student(x)
        loss = F.kl_div(F.log_softmax(student_logits / T, dim=1), F.softmax(teacher_logits / T, dim=1))
        loss = loss + F.cross_entropy(student_logits, y)
        loss.backward()
        optimizer.step()
""",
            line=11,
        ),
    )


def _computed_without_grad(loop: TrainingLoop, backward: BackwardSite,
                           names: ModuleNames) -> Optional[cst.BaseExpression]:
    """The context that disabled gradients while the backward's loss was computed, if any."""
    loss = backward.loss
    if loss is None:
        return None
    if dotted_name(loss) is None:  # an expression computed right in the backward call
        disabled = loop.grad_disabled_at(backward, names)
        if disabled is not None:
            return disabled
    state, context = _GradTracer(loop, names).trace(loss, backward.point[0], 0)
    return context if state == "off" else None


# Tensor methods that compute from their receiver and arguments only, with no parameters of their own.
_PURE_TENSOR_METHODS = TENSOR_METHODS | {
    "cpu", "cuda", "clone", "double", "half", "abs", "sqrt", "exp", "log", "pow", "gather", "argmax", "max", "min",
    "norm", "clamp", "squeeze", "expand", "expand_as", "view_as", "mul", "add", "sub", "neg", "sigmoid", "tanh",
}
Traced = Tuple[str, Optional[cst.BaseExpression]]


class _GradTracer:
    """Whether a loss carries no graph because what it is computed from was computed with gradients off.

    `trace` answers ("off", context) when every input that could carry a graph was computed under a
    `no_grad()`-like `context` (and the rest are data or numbers), ("none", None) for data and numbers
    only, and ("maybe", None) as soon as anything could carry a graph: a model call, an unknown callable,
    a name whose value may come from before the iteration. When unsure, the answer is "maybe", and
    nothing is reported.
    """

    _MAX_DEPTH = 12

    def __init__(self, loop: TrainingLoop, names: ModuleNames) -> None:
        self.loop = loop
        self.names = names
        self.data: Set[str] = set()
        node = loop.node
        if isinstance(node, cst.For) and not any(
            loop.value_before_loop(name) is not None and loop.builds_graph(loop.value_before_loop(name), names)
            for name in iter_names(node.iter)
        ):  # `for x, y in loader`: data; not `for out in outputs` over a forward pass before the loop
            self.data = set(iter_names(node.target))

    def trace(self, node: cst.BaseExpression, at: int, depth: int) -> Traced:
        if depth > self._MAX_DEPTH:
            return "maybe", None
        depth += 1
        if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)):
            return "none", None
        if isinstance(node, (cst.Name, cst.Attribute)) and dotted_name(node) is not None:
            return self._name(dotted_name(node), at, depth)
        if isinstance(node, cst.Subscript):
            return self.trace(node.value, at, depth)
        if isinstance(node, cst.BinaryOperation):
            return _combine([self.trace(node.left, at, depth), self.trace(node.right, at, depth)])
        if isinstance(node, cst.UnaryOperation):
            return self.trace(node.expression, at, depth)
        if isinstance(node, cst.Call):
            return self._call(node, at, depth)
        return "maybe", None

    def _call(self, node: cst.Call, at: int, depth: int) -> Traced:
        args = [self.trace(arg.value, at, depth) for arg in node.args]
        func = node.func
        qualified = self.names.callee(node)
        if qualified is not None:
            pure = qualified.startswith("torch.") and (
                not qualified.startswith("torch.nn.") or qualified.startswith("torch.nn.functional.")
            )
            return _combine(args) if pure else ("maybe", None)
        if isinstance(func, cst.Name) and func.value in ("float", "int", "len"):
            return "none", None
        if isinstance(func, cst.Attribute) and func.attr.value in _PURE_TENSOR_METHODS:
            return _combine([self.trace(func.value, at, depth)] + args)
        callee = dotted_name(func)
        if callee is not None and any(
            self.names.is_loss_class(c) for c in self.names.constructors_of(callee)
        ):  # `criterion = nn.CrossEntropyLoss()`: no parameters of its own
            return _combine(args)
        return "maybe", None

    def _name(self, name: str, at: int, depth: int) -> Traced:
        if name in self.data:
            return "none", None
        for candidate in prefixes(name):  # `outputs.loss`, then `outputs`
            definitions = self.loop.reaching(candidate, at)
            inside = [definition for definition in definitions if definition.kind != "start"]
            if not inside:
                continue
            if len(inside) != len(definitions):  # on some path the value comes from before the iteration
                return "maybe", None
            parts: List[Traced] = []
            for definition in inside:
                assignment = self.loop.assignment_of(definition)
                disabled = self.loop.grad_disabled_at(assignment, self.names) if assignment is not None else None
                if disabled is not None:
                    parts.append(("off", disabled))
                elif definition.kind != "assign" or definition.value is None:
                    return "maybe", None
                else:
                    parts.append(self.trace(definition.value, definition.node, depth))
            return _combine(parts)
        if is_number(self.loop.value_before_loop(name)) or self._numeric_parameter(name):
            return "none", None
        return "maybe", None

    def _numeric_parameter(self, name: str) -> bool:
        """`T` in `def distill(..., T=4.0)`: a hyperparameter, not a tensor with a graph."""
        function = self.loop.function
        if function is None:
            return False
        params = function.params
        for param in tuple(params.params) + tuple(params.kwonly_params):
            if param.name.value == name:
                default = param.default
                return default is not None and (is_number(default) or int_value(default) is not None)
        return False


def _combine(parts: List[Traced]) -> Traced:
    if any(state == "maybe" for state, _ in parts):
        return "maybe", None
    for state, context in parts:
        if state == "off":
            return state, context
    return "none", None
