"""TL018 non-scalar-backward: `backward()` on a loss built with `reduction='none'`, never reduced.

## What it does

Flags a backward in a training loop (`loss.backward()`,
`scaler.scale(loss).backward()`, `accelerator.backward(loss)`,
`torch.autograd.backward(loss)`, `torch.autograd.grad(loss, params)`) given
no gradient of its own (`gradient=`, `grad_tensors=`, `grad_outputs=`) when
the tensor comes, on some path through the iteration, from a per-element
loss that nothing reduced: a criterion built with `reduction='none'` (or the
legacy `reduce=False`), or `F.mse_loss(..., reduction="none")`, followed
back through the assignments that reach the backward.

## Why is this bad?

`backward()` without a gradient argument needs a tensor with one element:
autograd seeds it with 1.0. A per-sample loss has one element per sample
(or per pixel, per token), so the first backward raises "grad can be
implicitly created only for scalar outputs" and the run dies before its
first update.

## Example

```python
criterion = nn.CrossEntropyLoss(reduction="none")
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
```

## Use instead

```python
criterion = nn.CrossEntropyLoss(reduction="none")
for x, y in loader:
    loss = criterion(model(x), y)
    loss.mean().backward()
    optimizer.step()
    optimizer.zero_grad()
```

Not flagged: a loss reduced on every path before the backward (`.mean()`,
`.sum()`, `torch.mean(...)`, `(weights * loss).sum()`, `loss.mean(dim=0)`),
a backward given its gradient (`loss.backward(torch.ones_like(loss))`,
`torch.autograd.backward(losses, grads)`, `autograd.grad(loss, x,
grad_outputs=...)`), a criterion whose reduction the code does not spell
(`reduction=args.reduction`), a criterion name bound to differently reduced
losses, and model outputs, whose shape the code does not show (a model may
return its own scalar loss).

## Fix safety

Unsafe: the fix reduces the backpropagated tensor with `.mean()`, which
trains like the criterion's default reduction when every element counts the
same. Whether the per-element losses were meant to be summed, weighted or
averaged over a mask instead is the user's choice, so the fix is applied
only with `--unsafe-fixes`.
"""

from __future__ import annotations

from typing import Iterator, List, Optional, Set

import libcst as cst

from torchlint.context import FileContext
from torchlint.model import ERROR, UNSAFE, Fix
from torchlint.names import ModuleNames, dotted_name, keyword, positional
from torchlint.rules import Example, Finding, Rule
from torchlint.training import BackwardSite, TrainingLoop
from torchlint.training.origin import reduction

# Methods (and `torch.` functions) whose result has fewer elements than their input: with no argument, one.
# With a `dim` they reduce only part of the tensor, which the code does not size: not flagged either.
_REDUCING = frozenset({"mean", "sum", "nansum", "nanmean", "prod", "norm", "max", "min", "amax", "amin",
                       "logsumexp", "std", "var", "median", "item", "dot", "vdot", "trace"})
# Methods whose result has the receiver's elements (or, for arithmetic, a broadcast of them).
_SAME_ELEMENTS = frozenset({"float", "double", "half", "bfloat16", "to", "cuda", "cpu", "clone", "contiguous",
                            "view", "reshape", "flatten", "squeeze", "unsqueeze", "abs", "neg", "exp", "log",
                            "sqrt", "pow", "clamp", "mul", "div", "add", "sub", "true_divide"})
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power)
_MAX_DEPTH = 12


class NonScalarBackward(Rule):
    code = "TL018"
    name = "non-scalar-backward"
    severity = ERROR
    summary = "`backward()` without a gradient on an unreduced (`reduction='none'`) loss"

    def check(self, context: FileContext) -> Iterator[Finding]:
        seen: Set[int] = set()
        for loop in context.loops:
            for backward in loop.backwards:
                # A backward a called function runs is traced in that function's own loop view, if any.
                if backward.via is not None or id(backward.node) in seen or backward.loss is None \
                        or _given_gradient(backward):
                    continue
                seen.add(id(backward.node))
                for tensor in _tensors(backward):
                    source = _Trace(loop, context.names).unreduced(tensor, backward.point[0])
                    if source is not None:
                        yield self._finding(context, backward, tensor, source)
                        break

    @staticmethod
    def _finding(context: FileContext, backward: BackwardSite, tensor: cst.BaseExpression,
                 source: cst.Call) -> Finding:
        call, loss, criterion = context.code(backward.node), context.code(tensor), context.code(source)
        if len(criterion) > 60:
            criterion = context.code(source.func) + "(...)"
        named = f"`{loss}` is" if loss == criterion else f"`{loss}` comes from `{criterion}`,"
        message = (
            f"{named} a per-element loss (`reduction='none'`) and is never reduced before `{call}`. "
            f"With no gradient given, autograd raises \"grad can be implicitly created only for scalar outputs\". "
            f"Reduce it first (`.mean()`, a weighted `.sum()`) or pass the gradient."
        )
        fix = None
        if tensor is backward.loss:
            reduced = f"{loss}.mean()" if _atomic(tensor) else f"({loss}).mean()"
            fix = Fix(UNSAFE, f"Backpropagate `{reduced}`", (context.replace(tensor, reduced),))
        return Finding(backward.node, message, fix)

    valid = (
        """
import torch.nn as nn
criterion = nn.CrossEntropyLoss(reduction="none")
for x, y in loader:
    loss = criterion(model(x), y).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
""",
        # A per-sample weighting, then a sum.
        """
import torch.nn.functional as F
for x, y, w in loader:
    per_sample = F.mse_loss(model(x), y, reduction="none")
    loss = (w * per_sample).sum() / w.sum()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
""",
        # The gradient is given.
        """
import torch
import torch.nn.functional as F
for x, y in loader:
    losses = F.binary_cross_entropy_with_logits(model(x), y, reduction="none")
    torch.autograd.backward(losses, torch.full_like(losses, 1 / len(losses)))
    optimizer.step()
    optimizer.zero_grad()
""",
        # A model's output: its shape is not in the code.
        """
for x, y in loader:
    loss = model(x, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
""",
    )
    invalid = (
        Example(
            """
import torch.nn as nn
criterion = nn.CrossEntropyLoss(reduction="none")
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
""",
            line=6,
            fixed="""
import torch.nn as nn
criterion = nn.CrossEntropyLoss(reduction="none")
for x, y in loader:
    loss = criterion(model(x), y)
    loss.mean().backward()
    optimizer.step()
    optimizer.zero_grad()
""",
            unsafe=True,
        ),
        # Reduced on one path only.
        Example(
            """
import torch.nn.functional as F
for x, y, mask in loader:
    loss = F.mse_loss(model(x), y, reduction="none")
    if mask is not None:
        loss = (loss * mask).sum() / mask.sum()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
""",
            line=7,
            fixed="""
import torch.nn.functional as F
for x, y, mask in loader:
    loss = F.mse_loss(model(x), y, reduction="none")
    if mask is not None:
        loss = (loss * mask).sum() / mask.sum()
    scaler.scale(loss.mean()).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
""",
            unsafe=True,
        ),
    )


def _given_gradient(backward: BackwardSite) -> bool:
    """The call seeds the backward itself: `gradient=`, `grad_tensors=`, `grad_outputs=`, or their positions."""
    call = backward.node
    kind = backward.kind
    if kind == "distributed":
        return True  # `dist_autograd.backward(ctx, roots)`: its own contract
    if kind == "autograd":
        return keyword(call, "grad_tensors") is not None or positional(call, 1) is not None
    if kind == "grad":
        return keyword(call, "grad_outputs") is not None or positional(call, 2) is not None
    if kind == "tensor" or kind == "scaler":
        return keyword(call, "gradient") is not None or positional(call, 0) is not None
    # `accelerator.backward(loss, **kwargs)`, `self.manual_backward(loss, *args)`: anything beyond the loss.
    return len(call.args) > 1


def _tensors(backward: BackwardSite) -> List[cst.BaseExpression]:
    """The tensors the backward starts from: `loss`, or each of `[l1, l2]`."""
    loss = backward.loss
    if isinstance(loss, (cst.List, cst.Tuple)):
        return [element.value for element in loss.elements if not isinstance(element, cst.StarredElement)]
    return [loss]


def _atomic(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or bool(getattr(node, "lpar", ()))


class _Trace:
    """Follows a tensor back through the definitions that reach it, to an unreduced per-element loss."""

    def __init__(self, loop: TrainingLoop, names: ModuleNames) -> None:
        self.loop = loop
        self.names = names
        self._active: Set[int] = set()

    def unreduced(self, node: cst.BaseExpression, at: int, depth: int = 0) -> Optional[cst.Call]:
        """The `reduction='none'` loss call whose elements `node` still has on some path, else None."""
        if depth > _MAX_DEPTH:
            return None
        depth += 1
        if isinstance(node, cst.BinaryOperation):
            if not isinstance(node.operator, _ARITHMETIC):
                return None  # `losses @ weights` is a reduction
            return self.unreduced(node.left, at, depth) or self.unreduced(node.right, at, depth)
        if isinstance(node, cst.UnaryOperation):
            return self.unreduced(node.expression, at, depth)
        if isinstance(node, cst.Call):
            return self._call(node, at, depth)
        name = dotted_name(node)
        if name is None:
            return None  # `losses[mask]`, `losses[0]`: the code does not say how many elements are left
        for definition in self.loop.reaching(name, at):
            if definition.kind not in ("assign", "augmented") or definition.value is None or definition.unpacked:
                continue
            if definition.index in self._active:
                continue
            self._active.add(definition.index)
            try:
                found = self.unreduced(definition.value, definition.node, depth)
                if found is None and definition.kind == "augmented":
                    found = self.unreduced(node, definition.node, depth)  # the value before `loss += ...`
            finally:
                self._active.discard(definition.index)
            if found is not None:
                return found
        return None

    def _call(self, call: cst.Call, at: int, depth: int) -> Optional[cst.Call]:
        func = call.func
        qualified = self.names.callee(call)
        if qualified is not None and qualified.startswith("torch.") and "." not in qualified[len("torch."):]:
            function = qualified[len("torch."):]
            if function in _REDUCING:
                return None
            if function in _SAME_ELEMENTS and positional(call, 0) is not None:
                return self.unreduced(positional(call, 0), at, depth)
            return None
        if qualified is not None and self.names.is_loss_function(qualified):
            return call if reduction(call) == "none" else None
        if isinstance(func, cst.Call):
            constructor = self.names.callee(func)
            if constructor is not None and self.names.is_loss_class(constructor):
                return call if reduction(func) == "none" else None
        if isinstance(func, cst.Attribute) and qualified is None:
            method = func.attr.value
            if method in _REDUCING:
                return None
            if method in _SAME_ELEMENTS:
                found = self.unreduced(func.value, at, depth)
                if found is None and method in ("mul", "div", "add", "sub", "true_divide"):
                    other = positional(call, 0)
                    found = self.unreduced(other, at, depth) if other is not None else None
                return found
        callee = dotted_name(func)
        if callee is not None and self._criterion_without_reduction(callee):
            return call
        return None

    def _criterion_without_reduction(self, callee: str) -> bool:
        """Every binding of `callee` in the file builds a torch loss with `reduction='none'`."""
        values = self.names.values_of(callee)
        if not values:
            return False
        for value in values:
            if not isinstance(value, cst.Call):
                return False
            constructor = self.names.callee(value)
            if constructor is None or not self.names.is_loss_class(constructor) or reduction(value) != "none":
                return False
        return True
