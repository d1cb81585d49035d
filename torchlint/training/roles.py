"""What the things a training loop calls are: backwards, optimizers, schedulers, scalers, resets.

Names are resolved through `torchlint.names.ModuleNames` (imports, the
constructors a name was bound to, aliases like `model = DDP(model)`); the
words of a name (`optimizer`, `scheduler`, `scaler`) decide only where the
file does not say.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

import libcst as cst

from torchlint.flow.cfg import block_of
from torchlint.training.graph import value_names
from torchlint.names import (GRAD_SCALERS, OPTIMIZER_FACTORIES, ModuleNames, dotted_name, is_true, iter_names, keyword,
                             last_component, positional, prefixes, short_callee, slot_of)
from torchlint.training import frameworks
from torchlint.walk import calls_in, preorder

_FRAMEWORK_BACKWARD_OWNERS = ("accelerator", "fabric", "engine")


def classify_backward(call: cst.Call, names: ModuleNames) -> Optional[Tuple[str, Optional[cst.BaseExpression],
                                                                         Optional[str]]]:
    """(kind, loss expression, framework receiver) for a backward-like call, else None.

    kind: `tensor` (`loss.backward()`), `autograd` (`torch.autograd.backward`),
    `distributed` (`dist_autograd.backward(ctx, [loss])`: gradients live in the
    context), `grad` (`torch.autograd.grad`), `scaler`, `framework`
    (`accelerator.backward(loss)`), `manual` (`self.manual_backward(loss)`).
    """
    func = call.func
    qualified = names.callee(call)
    if qualified == "torch.autograd.backward":
        return "autograd", positional(call, 0) or keyword(call, "tensors"), None
    if qualified == "torch.distributed.autograd.backward":
        return "distributed", positional(call, 1) or keyword(call, "roots"), None
    if qualified == "torch.autograd.grad":
        return "grad", positional(call, 0) or keyword(call, "outputs"), None
    if not isinstance(func, cst.Attribute):
        return None
    method = func.attr.value
    receiver = func.value
    if method == "manual_backward":
        return "manual", positional(call, 0), None
    if method != "backward":
        return None
    if (
        isinstance(receiver, cst.Call)
        and isinstance(receiver.func, cst.Attribute)
        and receiver.func.attr.value == "scale"
        and positional(receiver, 0) is not None
    ):
        return "scaler", positional(receiver, 0), dotted_name(receiver.func.value)
    owner = dotted_name(receiver)
    if owner is not None and positional(call, 0) is not None and is_framework(owner, names):
        return "framework", positional(call, 0), owner
    return "tensor", receiver, None


def is_framework(owner: str, names: ModuleNames) -> bool:
    short = last_component(owner).lower()
    if any(word in short for word in _FRAMEWORK_BACKWARD_OWNERS):
        return True
    return any(c.startswith(frameworks.BACKWARD_OWNERS) for c in names.constructors_of(owner))


def retain_graph_arg(call: cst.Call, kind: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("retain_graph", "keep_graph") and is_true(arg.value):
            return arg
    if kind == "tensor":
        position = 0
        for arg in call.args:
            if arg.keyword is None:
                if position == 1 and is_true(arg.value):
                    return arg
                position += 1
    return None


def is_scaler(receiver: str, names: ModuleNames) -> bool:
    if "scaler" in last_component(receiver).lower():
        return True
    return any(c in GRAD_SCALERS for c in names.constructors_of(receiver))


def is_scheduler(receiver: str, names: ModuleNames) -> bool:
    if any(names.is_scheduler_class(c) for c in names.constructors_of(receiver)):
        return True
    return "sched" in last_component(receiver).lower()


# Where a scheduler's horizon (the number of `step()` calls its schedule spans) sits in its constructor:
# (keyword, position) of each factor. OneCycleLR's is `total_steps`, else `epochs * steps_per_epoch`.
_HORIZONS = {
    "CosineAnnealingLR": ((("T_max", 1),),),
    "LinearLR": ((("total_iters", 3),),),
    "ConstantLR": ((("total_iters", 2),),),
    "PolynomialLR": ((("total_iters", 1),),),
    "OneCycleLR": ((("total_steps", 2),), (("epochs", 3), ("steps_per_epoch", 4))),
    "get_linear_schedule_with_warmup": ((("num_training_steps", 2),),),
    "get_cosine_schedule_with_warmup": ((("num_training_steps", 2),),),
    "get_cosine_with_hard_restarts_schedule_with_warmup": ((("num_training_steps", 2),),),
    "get_polynomial_decay_schedule_with_warmup": ((("num_training_steps", 2),),),
    "get_scheduler": ((("num_training_steps", 3),),),
}
_SCHEDULE_PACKAGES = ("torch.optim.lr_scheduler.", "transformers.")


def scheduler_horizons(constructions: Sequence[cst.BaseExpression],
                       names: ModuleNames) -> Optional[List[Tuple[cst.BaseExpression, ...]]]:
    """For each construction of a scheduler, the factors whose product is its horizon: `(T_max,)` of
    `CosineAnnealingLR(opt, T_max=...)`, `(epochs, steps_per_epoch)` of a `OneCycleLR`. None when a
    construction is not one of these or does not show its horizon (a `LambdaLR`)."""
    found = []
    for value in constructions:
        qualified = names.callee(value) if isinstance(value, cst.Call) else None
        if qualified is None or not qualified.startswith(_SCHEDULE_PACKAGES):
            return None
        for spelling in _HORIZONS.get(last_component(qualified), ()):
            factors = tuple(keyword(value, word) or positional(value, index) for word, index in spelling)
            if all(factor is not None for factor in factors):
                found.append(factors)
                break
        else:
            return None
    return found or None


def is_optimizer(receiver: str, names: ModuleNames, scaled: Iterable[str], reset: Iterable[str]) -> bool:
    """`receiver` is an optimizer: built by an optimizer class or factory, stepped through a scaler
    (`scaler.step(receiver)`), reset (`receiver.zero_grad()`) in the loop or its function, or named like one."""
    constructors = names.constructors_of(receiver)
    if any(names.is_scheduler_class(c) for c in constructors):
        return False
    if any(names.is_optimizer_class(c) for c in constructors) or any(c.endswith("Optimizer") for c in constructors):
        return True
    own = [_own_class_optimizes(value, names) if isinstance(value, cst.Call) else None
           for value in names.values_of(receiver)]
    if True in own:
        return True
    if own and all(answer is False for answer in own):
        return False  # `ema = WeightEMA(model, ema_model)`: its `step()` averages weights, it reads no gradient
    for value in names.values_of(receiver):
        if isinstance(value, cst.Call) and (dotted_name(value.func) or "").endswith(".optimizers"):
            return True
    if receiver in scaled or receiver in reset:
        return True
    short = last_component(receiver).lower()
    if "sched" in short:
        return False
    return "optim" in short or short in ("opt", "optim") or short.startswith("opt_") or short.endswith("_opt")


# Methods whose call on anything hands the gradients over: another optimizer's `step()`, a reset, a backward.
_GRADIENT_METHODS = frozenset({"step", "zero_grad", "backward", "grad"})


def _own_class_optimizes(call: cst.Call, names: ModuleNames) -> Optional[bool]:
    """Whether a call of a class of this file builds an optimizer. Yes: the class derives from a torch
    optimizer (`class LARS(torch.optim.Optimizer)`). No: neither it nor its bases of this file derive from
    anything else, and no method of it touches a gradient — reads `.grad`, calls a `step()`, `zero_grad()`,
    `backward()` or `grad()`, or a function that may (one of this file that does, one imported from elsewhere
    than torch): an EMA of the weights. Unknown otherwise (not a class of this file, an unknown base)."""
    found = names.classes.get(dotted_name(call.func) or "", [])
    return _class_optimizes(found[0], names, 0) if len(found) == 1 else None


def _class_optimizes(class_def: cst.ClassDef, names: ModuleNames, depth: int) -> Optional[bool]:
    answer: Optional[bool] = False
    for base in class_def.bases:
        dotted = dotted_name(base.value)
        qualified = names.qualify(base.value) or ""
        local = names.classes.get(dotted or "", [])
        if names.is_optimizer_class(qualified) or qualified.endswith("Optimizer"):
            return True
        if dotted == "object" and not local:
            continue
        if len(local) == 1 and local[0] is not class_def and depth < 3:
            inherited = _class_optimizes(local[0], names, depth + 1)
            if inherited:
                return True
            if inherited is None:
                answer = None
            continue
        answer = None
    if answer is False and _touches_gradients(class_def.body, names, 0):
        answer = None
    return answer


def _touches_gradients(node: cst.CSTNode, names: ModuleNames, depth: int) -> bool:
    for part in preorder(node):
        if isinstance(part, cst.Attribute) and part.attr.value == "grad":
            return True
        if not isinstance(part, cst.Call):
            continue
        func = part.func
        if isinstance(func, cst.Attribute) and func.attr.value in _GRADIENT_METHODS:
            return True
        callee = dotted_name(func)
        if callee is None:
            continue
        imported = names.imported(callee)
        if imported is not None:
            level, origin = imported
            if level or not origin.startswith("torch."):
                return True  # a function of another file or package may read the gradients
            continue
        local = names.functions.get(callee, []) + names.classes.get(callee, [])
        if local and (depth >= 3 or any(_touches_gradients(d, names, depth + 1) for d in local)):
            return True
    return False


# Reads of the learning rate an optimizer runs with: `scheduler.get_last_lr()`, a `get_lr(optimizer)` helper.
_LEARNING_RATE_READERS = frozenset({"get_last_lr", "get_lr", "_last_lr"})


def reads_learning_rate(node: cst.CSTNode, optimizer: str, scheduler: str, names: ModuleNames,
                        depth: int = 0) -> bool:
    """`node` may read the learning rate: `optimizer.param_groups[0]["lr"]` (any `param_groups`, any `["lr"]`),
    `scheduler.get_last_lr()`, `get_lr(optimizer)`, anything of the scheduler but its `step()`
    (`scheduler.last_epoch`), the scheduler handed to a call, the optimizer handed to a call of code this
    file does not show; and a function of this file it calls that reads one of these itself
    (`record(history, optimizer)` appending `optimizer.param_groups[0]["lr"]`)."""
    for part in preorder(node):
        if isinstance(part, cst.Attribute):
            if part.attr.value == "param_groups" or part.attr.value in _LEARNING_RATE_READERS:
                return True
            if dotted_name(part.value) == scheduler and part.attr.value != "step":
                return True
        elif isinstance(part, cst.Name) and part.value in _LEARNING_RATE_READERS:
            return True
        elif isinstance(part, cst.SubscriptElement) and isinstance(part.slice, cst.Index) \
                and isinstance(part.slice.value, cst.SimpleString) and part.slice.value.evaluated_value == "lr":
            return True
        elif isinstance(part, cst.Call):
            handed = {dotted_name(arg.value) for arg in part.args}
            if scheduler in handed:
                return True
            found = helpers(dotted_name(part.func), names, None)
            if not found:
                if optimizer in handed and depth == 0:  # a helper's own calls are read only for what it reads
                    return True
            elif depth >= 3 or any(reads_learning_rate(function.body, optimizer, scheduler, names, depth + 1)
                                   for function in found):
                return True
    return False


def optimized_models(optimizer: str, names: ModuleNames) -> FrozenSet[str]:
    """`model` for `optimizer = SGD(model.parameters())`; empty when it cannot be read."""
    models: Set[str] = set()
    for value in names.values_of(optimizer):
        if isinstance(value, cst.Call):
            models |= parameter_owners(value, names, follow=2)
    return frozenset(models)


def parameter_owners(expression: cst.BaseExpression, names: ModuleNames, follow: int = 0) -> Set[str]:
    """The modules whose `.parameters()` (or `.named_parameters()`) `expression` reads, with their aliases
    (`self.model = model`, `model = DDP(model)`: the same parameters by another name). With `follow`, also
    through the names it reads, that many bindings deep: `params` in `SGD(params)` or `for p in params:`
    where `params = [p for p in model.parameters() if p.requires_grad]`."""
    memo = names.memo.setdefault("parameter_owners", {})
    key = (id(expression), follow)
    if key in memo:
        return set(memo[key])
    memo[key] = frozenset()  # a name bound to an expression that reads it back adds nothing
    owners: Set[str] = set()
    for call in calls_in(expression):
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("parameters", "named_parameters"):
            owner = dotted_name(func.value)
            if owner is not None:
                owners |= names.aliases_of(owner)
    if follow > 0:
        for name in set(value_names(expression)):
            for value in names.values_of(name):
                owners |= parameter_owners(value, names, follow - 1)
    memo[key] = frozenset(owners)
    return owners


@dataclass(frozen=True)
class HeldParameters:
    """The tensors an optimizer is built over, as far as its construction shows them."""

    whole: FrozenSet[str]  # modules all of whose parameters it holds: `model.parameters()`
    part: FrozenSet[str]  # modules some of whose parameters it holds: `[p for p in model.parameters() if ...]`
    complete: bool  # it holds nothing else: every tensor it holds is a parameter of one of these modules

    @property
    def owners(self) -> FrozenSet[str]:
        return self.whole | self.part


_UNREAD = HeldParameters(frozenset(), frozenset(), False)
# Calls whose result is the elements of their arguments, one after the other.
_CHAINS = frozenset({"list", "tuple", "itertools.chain", "chain"})


def optimizer_parameters(optimizer: str, names: ModuleNames) -> Optional[Tuple[HeldParameters, ...]]:
    """What `optimizer` holds, for each construction the file binds to it (`Adam(itertools.chain(
    G.parameters(), D.parameters()))`, `SGD([{"params": model.backbone.parameters()}, ...])`); None when it is
    bound to anything but a torch optimizer class called on its parameters (a factory, `prepare(...)`, a
    parameter of a function)."""
    memo = names.memo.setdefault("optimizer_parameters", {})
    if optimizer not in memo:
        memo[optimizer] = _optimizer_parameters(optimizer, names)
    return memo[optimizer]


def _optimizer_parameters(optimizer: str, names: ModuleNames) -> Optional[Tuple[HeldParameters, ...]]:
    values = names.values_of(optimizer)
    if not values:
        return None
    held = []
    for value in values:
        qualified = names.callee(value) if isinstance(value, cst.Call) else None
        if qualified is None or qualified in OPTIMIZER_FACTORIES or not names.is_optimizer_class(qualified):
            return None
        params = positional(value, 0) or keyword(value, "params")
        if params is None:
            return None
        held.append(held_parameters(params, names))
    return tuple(held)


def held_parameters(params: cst.BaseExpression, names: ModuleNames, depth: int = 0) -> HeldParameters:
    """The modules whose parameters an optimizer's `params` argument holds: `model.parameters()`, a chain
    or a list of them (`itertools.chain(G.parameters(), D.parameters())`, `[*G.parameters(),
    *D.parameters()]`, `list(a.parameters()) + list(b.parameters())`), parameter groups (`[{"params":
    ..., "lr": ...}, ...]`), a selection of one module's (`filter(lambda p: p.requires_grad,
    model.parameters())`, `[p for n, p in model.named_parameters() if ...]`: part of it), or a name the file
    binds to one of these. Anything else (`[log_alpha]`, `model.fc.weight`, a parameter of a function) makes
    the answer incomplete."""
    if depth > 8:
        return _UNREAD
    parts: List[HeldParameters] = []
    if isinstance(params, cst.Call):
        func = params.func
        callee = dotted_name(func) or ""
        if isinstance(func, cst.Attribute) and func.attr.value in ("parameters", "named_parameters"):
            owner = dotted_name(func.value)
            if owner is None:
                return _UNREAD
            return HeldParameters(frozenset({owner}), frozenset(), True)
        if callee in _CHAINS and params.args and all(arg.star == "" and arg.keyword is None for arg in params.args):
            parts = [held_parameters(arg.value, names, depth + 1) for arg in params.args]
        elif callee == "filter" and len(params.args) == 2:
            selected = held_parameters(params.args[1].value, names, depth + 1)
            return HeldParameters(frozenset(), selected.owners, selected.complete)
        else:
            return _UNREAD
    elif isinstance(params, (cst.List, cst.Tuple)):
        if not params.elements:
            return _UNREAD
        for element in params.elements:
            if isinstance(element, cst.StarredElement) or isinstance(element.value, cst.Dict):
                parts.append(held_parameters(element.value, names, depth + 1))
            else:
                return _UNREAD  # one tensor: `[log_alpha]`, `[model.fc.weight]`
    elif isinstance(params, cst.Dict):
        groups = [e.value for e in params.elements
                  if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
                  and e.key.evaluated_value == "params"]
        if len(groups) != 1:
            return _UNREAD
        return held_parameters(groups[0], names, depth + 1)
    elif isinstance(params, cst.BinaryOperation) and isinstance(params.operator, cst.Add):
        parts = [held_parameters(params.left, names, depth + 1), held_parameters(params.right, names, depth + 1)]
    elif isinstance(params, (cst.ListComp, cst.GeneratorExp)):
        clause = params.for_in
        if clause.inner_for_in is not None or dotted_name(params.elt) is None \
                or dotted_name(params.elt) not in iter_names(clause.target):
            return _UNREAD
        selected = held_parameters(clause.iter, names, depth + 1)
        return HeldParameters(frozenset(), selected.owners, selected.complete)
    elif isinstance(params, (cst.Name, cst.Attribute)):
        values = names.values_of(dotted_name(params) or "")
        if not values:
            return _UNREAD
        parts = {held_parameters(value, names, depth + 1) for value in values}
        # `params` bound to different modules' parameters (in two functions): which one reaches is not read here
        return parts.pop() if len(parts) == 1 else _UNREAD
    else:
        return _UNREAD
    whole = frozenset().union(*(p.whole for p in parts))
    return HeldParameters(whole, frozenset().union(*(p.part for p in parts)) - whole, all(p.complete for p in parts))


def covers(reset_module: str, owner: str, names: ModuleNames) -> bool:
    """`reset_module.zero_grad()` clears every gradient of `owner`: the same module (by an alias too), a
    module holding it (`model` holds `model.backbone`), or a wrapper's `.module`."""
    if reset_module.endswith(".module"):
        reset_module = reset_module[: -len(".module")]
    resetting = names.aliases_of(reset_module)
    return any(names.aliases_of(part) & resetting for part in prefixes(owner))


def scheduled_optimizer(scheduler: str, optimizers: FrozenSet[str], names: ModuleNames) -> Optional[str]:
    """`opt_g` for `sched_g = ExponentialLR(opt_g, gamma=...)`, when it is one of the loop's optimizers."""
    for value in names.values_of(scheduler):
        if not isinstance(value, cst.Call):
            continue
        passed = positional(value, 0) or keyword(value, "optimizer")
        name = dotted_name(passed) if passed is not None else None
        if name is None:
            continue
        for optimizer in optimizers:
            if optimizer == name or optimizer in names.aliases_of(name):
                return optimizer
    return None


def same_module(a: str, b: str) -> bool:
    """`model` and `model.backbone` (or `model.module`) share parameters."""
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


# --- gradient resets and scalings ---------------------------------------------------


def ends_in_grad(node: cst.BaseExpression) -> bool:
    """`p.grad` or `p.grad.data`."""
    if not isinstance(node, cst.Attribute):
        return False
    if node.attr.value == "grad":
        return True
    return node.attr.value == "data" and isinstance(node.value, cst.Attribute) and node.value.attr.value == "grad"


def grad_owner(node: cst.Attribute) -> Optional[str]:
    """`p` for `p.grad` and `p.grad.data`."""
    if node.attr.value == "data":
        node = node.value
    return dotted_name(node.value)


# In-place methods that wipe a gradient (`p.grad.zero_()`), and those that rescale it (`p.grad.div_(n)`).
_WIPING_METHODS = frozenset({"zero_", "detach_"})
_SCALING_METHODS = frozenset({"div_", "mul_"})
_SCALING_OPERATORS = frozenset({"/=", "*="})
_FOREACH_SCALINGS = frozenset({"torch._foreach_div_", "torch._foreach_mul_"})
_SCALING_HELPER = re.compile(r"(scale|div|normali[sz]e)\w*grad|grad\w*(scale|div|normali[sz]e)")


def is_none(node: Optional[cst.BaseExpression]) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def wipes_grad(call: cst.Call) -> bool:
    """`p.grad.zero_()`, `p.grad.detach_()`, `p.grad.data.zero_()`."""
    func = call.func
    return isinstance(func, cst.Attribute) and func.attr.value in _WIPING_METHODS and ends_in_grad(func.value)


@dataclass(frozen=True)
class DescentUpdate:
    """A tensor updated in place from its own gradient, by hand: `w -= lr * w.grad`, `w.data -= lr * w.grad.data`,
    `w.data = w.data - lr * w.grad`, `w[mask] = w[mask] - lr * w.grad[mask]`, `w.sub_(lr * w.grad)`,
    `w.data.add_(w.grad, alpha=-lr)`, `w.copy_(w - lr * w.grad)` (a gradient-descent step without an optimizer)."""

    node: cst.CSTNode  # the augmented assignment or the call
    tensor: str  # `w`: what is updated, and whose `.grad` it reads
    anchor: Optional[cst.CSTNode]  # the statement a reset would follow, in its block; None: a one-line body
    over: Optional[cst.For] = None  # the loop over tensors it sits in (`for p in model.parameters():`), if any


_DESCENT_OPERATORS = (cst.SubtractAssign, cst.AddAssign)
_DESCENT_METHODS = frozenset({"sub_", "add_", "copy_"})


def descent_updates(body: cst.BaseSuite) -> List[DescentUpdate]:
    """The by-hand gradient-descent updates of a loop's body: in its statements, through `with` (`with
    torch.no_grad():`) and a nested `for` over tensors, not under an `if`, a `try`, a `while` or a nested
    definition (an update that only some iterations run is not read)."""
    found: List[DescentUpdate] = []
    _descent_in(body, None, found)
    return found


def _descent_in(suite: cst.BaseSuite, over: Optional[cst.For], found: List[DescentUpdate],
                compound: Optional[cst.CSTNode] = None) -> None:
    if isinstance(suite, cst.SimpleStatementSuite):  # `with torch.no_grad(): w -= lr * w.grad`
        anchor = compound if isinstance(compound, cst.With) else None  # after the `with`; not after a one-line `for`
        for small in suite.body:
            _descent_statement(small, anchor, over, found)
        return
    for statement in suite.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                _descent_statement(small, statement if len(statement.body) == 1 else None, over, found)
        elif isinstance(statement, cst.With):
            _descent_in(statement.body, over, found, statement)
        elif isinstance(statement, cst.For) and over is None and not statement.orelse:
            _descent_in(statement.body, statement, found, statement)


def _descent_statement(small: cst.BaseSmallStatement, anchor: Optional[cst.CSTNode], over: Optional[cst.For],
                       found: List[DescentUpdate]) -> None:
    tensor = None
    if isinstance(small, cst.AugAssign) and isinstance(small.operator, _DESCENT_OPERATORS):
        tensor = _updated(small.target)
        reads = small.value
        node: cst.CSTNode = small
    elif isinstance(small, cst.Assign) and len(small.targets) == 1 and (
            isinstance(small.targets[0].target, cst.Subscript)
            or isinstance(small.targets[0].target, cst.Attribute) and small.targets[0].target.attr.value == "data"):
        # `w.data = w.data - lr * w.grad`, `w[mask] = w[mask] - lr * w.grad[mask]`
        target = small.targets[0].target
        tensor = _updated(target.value if isinstance(target, cst.Subscript) else target)
        reads = small.value
        node = small
    elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
            and isinstance(small.value.func, cst.Attribute) and small.value.func.attr.value in _DESCENT_METHODS:
        tensor = _updated(small.value.func.value)
        reads = small.value
        node = small.value
    if tensor is None or not any(isinstance(part, cst.Attribute) and part.attr.value == "grad"
                                 and dotted_name(part.value) in (tensor, tensor + ".data")
                                 for part in preorder(reads)):
        return
    found.append(DescentUpdate(node, tensor, anchor, over))


def _updated(target: cst.BaseExpression) -> Optional[str]:
    """`w` for `w` and `w.data` (the caller passes the `w` of `w[mask]`); None for anything else (`w.grad`,
    `w[0]`)."""
    name = dotted_name(target)
    if name is None:
        return None
    if name.endswith(".data"):
        name = name[: -len(".data")]
    return None if name.endswith(".grad") or name.split(".")[-1] == "grad" else name


def scales_grad_call(call: cst.Call, names: ModuleNames) -> bool:
    """`p.grad.div_(n)`, `p.grad.data.mul_(1 / n)`, `torch._foreach_div_(grads, n)`, or a library
    helper named for it that is handed what to scale: `training.scale_grads(model, 1 / num_tokens)`."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in _SCALING_METHODS and ends_in_grad(func.value):
        return True
    if names.callee(call) in _FOREACH_SCALINGS:
        return True
    callee = dotted_name(func)
    if callee is None or "grad" not in callee.lower():
        return False
    if callee in names.functions or (callee.startswith("self.") and callee[5:] in names.functions):
        return False  # a helper of this file is read, not guessed from its name
    short = last_component(callee).lower()
    return bool(call.args) and not short.startswith("unscale") and _SCALING_HELPER.search(short) is not None


def scales_grad_assignment(target: cst.BaseExpression, operator: str, value: Optional[cst.BaseExpression]) -> bool:
    """`p.grad /= n`, `p.grad = p.grad / n`."""
    if not ends_in_grad(target):
        return False
    if operator in _SCALING_OPERATORS:
        return True
    return (operator == "=" and isinstance(value, cst.BinaryOperation)
            and isinstance(value.operator, (cst.Divide, cst.Multiply))
            and dotted_name(value.left) == dotted_name(target))


def grad_divisor(node: cst.CSTNode, names: ModuleNames,
                 caller: Optional[cst.FunctionDef] = None) -> Optional[cst.BaseExpression]:
    """What a rescaling of the gradients divides them by: `n` of `p.grad.div_(n)`, `p.grad /= n`,
    `p.grad.mul_(1 / n)`, `p.grad = p.grad / n`, `torch._foreach_div_(grads, n)`, a library helper handed
    `1 / n` (`scale_grads(model, 1 / n)`); for a helper of this file, the argument its parameter receives
    (`normalise(model, seen)` doing `p.grad /= count`). None when the code does not say."""
    factor = _grad_factor(node, names)
    if factor is not None:
        operation, operand = factor
        return operand if operation == "div" else _denominator(operand)
    if not isinstance(node, cst.Call):
        return None
    found = helpers(dotted_name(node.func), names, caller)
    if not found:  # a library helper named for it: handed `1 / n`
        handed = [_denominator(arg.value) for arg in node.args] if scales_grad_call(node, names) else []
        return next((divisor for divisor in handed if divisor is not None), None)
    if len(found) != 1:
        return None
    function = found[0]
    factors = {(operation, dotted_name(operand)) for part in preorder(function.body)
               for operation, operand in [_grad_factor(part, names) or ("", None)] if operation}
    if len(factors) != 1:
        return None
    ((operation, parameter),) = factors
    argument = argument_for(node, function, parameter) if parameter is not None else None
    if argument is None:
        return None
    return argument if operation == "div" else _denominator(argument)


def _grad_factor(node: cst.CSTNode, names: ModuleNames) -> Optional[Tuple[str, cst.BaseExpression]]:
    """("div", n) or ("mul", f) for an in-place rescaling of a gradient by one operand."""
    if isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _SCALING_METHODS and ends_in_grad(func.value) \
                and positional(node, 0) is not None:
            return ("div" if func.attr.value == "div_" else "mul"), positional(node, 0)
        qualified = names.callee(node)
        if qualified in _FOREACH_SCALINGS and positional(node, 1) is not None:
            return ("div" if qualified.endswith("div_") else "mul"), positional(node, 1)
        return None
    if isinstance(node, cst.AugAssign) and ends_in_grad(node.target):
        if isinstance(node.operator, cst.DivideAssign):
            return "div", node.value
        if isinstance(node.operator, cst.MultiplyAssign):
            return "mul", node.value
        return None
    if isinstance(node, cst.Assign) and len(node.targets) == 1 and ends_in_grad(node.targets[0].target):
        value = node.value
        if isinstance(value, cst.BinaryOperation) \
                and dotted_name(value.left) == dotted_name(node.targets[0].target):
            if isinstance(value.operator, cst.Divide):
                return "div", value.right
            if isinstance(value.operator, cst.Multiply):
                return "mul", value.right
    return None


def _denominator(node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`n` of `1 / n` (or `1.0 / n`), also of `k / n` with a number or a named value on top
    (`self.world_size / num_tokens`: the gradients divided by the count, times a factor)."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide) and (
            isinstance(node.left, (cst.Integer, cst.Float)) or dotted_name(node.left) is not None):
        return node.right
    return None


def argument_for(call: cst.Call, function: cst.FunctionDef, parameter: str) -> Optional[cst.BaseExpression]:
    """What `call` passes for `function`'s parameter `parameter` (by keyword or position, `self` skipped)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == parameter:
            return arg.value
    ordered = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    if ordered and ordered[0] == "self" and isinstance(call.func, cst.Attribute):
        ordered = ordered[1:]
    if parameter not in ordered:
        return None
    return positional(call, ordered.index(parameter))


class GradWork:
    """What a function body does to gradients: resets (`x.zero_grad()`, `p.grad = None`, `p.grad.zero_()`)
    and rescalings (`p.grad.div_(n)`, `p.grad /= n`)."""

    def __init__(self, node: cst.CSTNode, names: ModuleNames) -> None:
        self.resets = False
        self.scales = False
        for part in preorder(node):
            if isinstance(part, cst.Call):
                func = part.func
                if isinstance(func, cst.Attribute) and func.attr.value == "zero_grad":
                    self.resets = True
                elif wipes_grad(part):
                    self.resets = True
                elif scales_grad_call(part, names):
                    self.scales = True
            elif isinstance(part, cst.Assign):
                for target in part.targets:
                    if isinstance(target.target, cst.Attribute) and target.target.attr.value == "grad" \
                            and is_none(part.value):
                        self.resets = True
                    elif scales_grad_assignment(target.target, "=", part.value):
                        self.scales = True
            elif isinstance(part, cst.AugAssign):
                operator = {cst.DivideAssign: "/=", cst.MultiplyAssign: "*="}.get(type(part.operator), "")
                if scales_grad_assignment(part.target, operator, part.value):
                    self.scales = True


def zero_grad_receivers(function: cst.FunctionDef) -> Set[str]:
    receivers: Set[str] = set()
    for call in calls_in(function.body):
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "zero_grad":
            receiver = dotted_name(func.value)
            if receiver:
                receivers.add(receiver)
    return receivers


def resets_unconditionally(statements: Sequence[cst.CSTNode], names: ModuleNames, depth: int = 0) -> bool:
    """A reset among `statements`, outside any `if`/`try`: `optimizer.zero_grad()`, or
    `for p in model.parameters(): p.grad = None`."""
    for statement in statements:
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            if GradWork(statement, names).resets:
                return True
        elif isinstance(statement, (cst.For, cst.With)) and depth < 2:
            if resets_unconditionally(block_of(statement), names, depth + 1):
                return True
    return False


def helpers(callee: Optional[str], names: ModuleNames, caller: Optional[cst.FunctionDef]) -> List[cst.FunctionDef]:
    """The functions of this file a call to `callee` (`helper` or `self.helper`) may run, the caller excluded."""
    if callee is None:
        return []
    short = callee[5:] if callee.startswith("self.") else callee
    if "." in short:
        return []
    return [function for function in names.functions.get(short, ()) if function is not caller]


# --- modules built where they are used ----------------------------------------------------

# nn.Module methods that return the module itself: `MLP(...).to(device)` is still the new module.
_RETURNS_SELF = frozenset({"to", "cuda", "cpu", "train", "eval", "float", "double", "half", "bfloat16",
                           "requires_grad_", "type"})
# Methods only a module has: a name they are called on holds a module.
_MODULE_METHODS = frozenset({"parameters", "named_parameters", "modules", "children", "named_modules", "train",
                             "eval", "state_dict", "load_state_dict", "zero_grad", "apply"})
# Calls that give a plain value, never a module: `feats.size(1)`, `len(vocab)`.
_PLAIN_VALUES = frozenset({"size", "dim", "numel", "item", "len", "int", "float", "round", "min", "max", "sum",
                           "get", "index"})


class ModuleScope:
    """Where a module's construction is read: the definitions reaching a node of one function (or of one
    iteration of a loop, where a `start` definition is the value from before the iteration and `before`
    gives the function's definitions entering the loop)."""

    def __init__(self, names: ModuleNames, flow, functions, before=None, reaching=None, renewed=None,
                 passed=None) -> None:
        self.names = names
        self.flow = flow
        self.functions = functions
        self._before = before
        self._reaching = reaching
        # `renewed(name, at)`: a call of this file that runs before `at` in the same iteration puts a value
        # of its own in `name` (`self._create_model()` setting `self.model`), so it is not the one from before.
        self.renewed = renewed
        # `passed(parameter)`: the caller hands this function a module built for this call.
        self.passed = passed
        self._uses: Optional[Set[str]] = None

    def reaching(self, name: str, at: int):
        return self._reaching(name, at) if self._reaching is not None else self.flow.reaching(at, name)

    def before(self, name: str):
        return self._before(name) if self._before is not None else []

    def used_as_module(self, name: str) -> bool:
        """The function calls `name(...)` or a method only modules have on it (`name.train()`)."""
        if self._uses is None:
            self._uses = set()
            for part in preorder(self.flow.graph.owner):
                if isinstance(part, cst.Call):
                    func = part.func
                    if isinstance(func, cst.Attribute) and func.attr.value in _MODULE_METHODS:
                        func = func.value
                    called = dotted_name(func)
                    if called is not None:
                        self._uses.add(called)
        return name in self._uses or any(_is_module_class(c, self.names) for c in self.names.constructors_of(name))

    def of(self, function: cst.FunctionDef) -> "ModuleScope":
        return ModuleScope(self.names, self.functions.flow(function), self.functions)


def _is_module_class(qualified: str, names: ModuleNames) -> bool:
    return qualified.startswith("torch.nn.") and last_component(qualified)[:1].isupper()


def _is_class(call: cst.Call, names: ModuleNames) -> bool:
    """`nn.Linear(...)`, `MLP(...)`: a class called, by the case of its name."""
    return last_component(dotted_name(call.func) or "")[:1].isupper()


def builds_new_module(value: Optional[cst.BaseExpression], at: int, scope: ModuleScope, depth: int = 0) -> bool:
    """`value` (at node `at`) is a module built there, whose parameters are all new: a class called with
    no existing module among its arguments (`nn.Linear(d, k)`, `MLP(dim, hidden, 10).to(device)`,
    `nn.Sequential(nn.Linear(d, h), nn.ReLU())`), a function of this file whose every `return` gives one
    (`build_model(cfg)`, handed no existing module), or a name bound to one on every path. Not
    `nn.Sequential(backbone, head)`: the backbone's parameters keep their gradients."""
    if depth > 12 or value is None:
        return False
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value in _RETURNS_SELF:
        value = value.func.value
    if isinstance(value, (cst.Name, cst.Attribute)):
        name = dotted_name(value)
        definitions = scope.reaching(name, at) if name is not None else []
        if definitions and scope.renewed is not None and all(d.kind == "start" for d in definitions) \
                and scope.renewed(name, at):
            return True
        return bool(definitions) and all(_new_module_definition(d, scope, depth + 1) for d in definitions)
    if not isinstance(value, cst.Call):
        return False
    if _loads_new_module(value):
        return not any(may_hold_module(arg.value, at, scope, depth + 1) for arg in value.args)
    if _is_class(value, scope.names):
        return not any(may_hold_module(arg.value, at, scope, depth + 1) for arg in value.args)
    builder = scope.functions.by_name(dotted_name(value.func) or "") if scope.functions is not None else None
    if builder is None or depth > 3 or any(may_hold_module(arg.value, at, scope, depth + 1) for arg in value.args):
        return False  # `wrap(backbone)` may put the backbone in what it returns
    inner = scope.of(builder)
    returns = scope.functions.returns(builder)
    return bool(returns) and all(builds_new_module(returned, node, inner, depth + 1) for returned, node in returns)


def _loads_new_module(call: cst.Call) -> bool:
    """`AutoModel.from_pretrained(path)`, `model_class.from_config(cfg)`: a class's constructor that loads
    a module of its own, whose parameters are new."""
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in _LOADERS


_LOADERS = frozenset({"from_pretrained", "from_config"})


def _new_module_definition(definition, scope: ModuleScope, depth: int) -> bool:
    if definition.kind == "parameter":
        return scope.passed is not None and scope.passed(definition.name)
    if definition.kind != "assign" or definition.value is None:
        return False
    if definition.unpacked:
        return returned_slot(definition, scope, lambda value, node, inner: builds_new_module(value, node, inner, depth))
    return builds_new_module(definition.value, definition.node, scope, depth)


def returned_slot(definition, scope: ModuleScope, test) -> bool:
    """`head, optimizer = make_head(d)`: `test(value, node, scope)` holds for the slot `definition` takes of
    every `return` of that function of this file."""
    value = definition.value
    if not isinstance(value, cst.Call) or scope.functions is None or not definition.position:
        return False
    function = scope.functions.by_name(dotted_name(value.func) or "")
    if function is None:
        return False
    inner = scope.of(function)
    found = []
    for returned, node in scope.functions.returns(function):
        part = slot_of(returned, definition.position)
        if part is None:
            return False
        found.append(test(part, node, inner))
    return bool(found) and all(found)


def may_hold_module(value: cst.BaseExpression, at: int, scope: ModuleScope, depth: int = 0) -> bool:
    """An argument of a module's constructor that may be a module built elsewhere (whose parameters,
    and gradients, the new module would share): a name used as a module, or bound to one; a call of
    unknown result. Numbers, configuration values (`cfg["dim"]`, `args.hidden`), `feats.size(1)` and
    modules built there are not."""
    if depth > 12:
        return True
    if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return False
    if isinstance(value, cst.Call):
        if _is_class(value, scope.names):
            return not builds_new_module(value, at, scope, depth + 1)
        short = last_component(dotted_name(value.func) or "")
        return short not in _PLAIN_VALUES
    if isinstance(value, (cst.Name, cst.Attribute)):
        name = dotted_name(value)
        if name is None or name in ("None", "True", "False"):
            return name is None
        if scope.used_as_module(name):
            return True
        definitions = scope.reaching(name, at)
        for definition in definitions:
            if definition.kind == "start":
                entering = scope.before(name)
                if any(d.kind == "assign" and d.value is not None and not d.unpacked
                       and may_hold_module(d.value, d.node, scope, depth + 1) for d in entering):
                    return True
            elif definition.kind in ("assign", "augmented") and definition.value is not None \
                    and not definition.unpacked:
                if may_hold_module(definition.value, definition.node, scope, depth + 1):
                    return True
        return False
    if isinstance(value, cst.Subscript):
        return may_hold_module(value.value, at, scope, depth + 1)
    if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation)):
        parts = [value.left, value.right] if isinstance(value, cst.BinaryOperation) else [value.expression]
        return any(may_hold_module(part, at, scope, depth + 1) for part in parts)
    if isinstance(value, (cst.Tuple, cst.List)):
        return any(may_hold_module(element.value, at, scope, depth + 1) for element in value.elements)
    if isinstance(value, cst.Dict):  # a configuration: `{"r": 8, "modules_to_save": [name]}`
        return any(not isinstance(element, cst.DictElement) or may_hold_module(element.value, at, scope, depth + 1)
                   for element in value.elements)
    return True
