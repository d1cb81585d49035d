"""Where a loss comes from: the criterion, its reduction, and whether it was divided on every path.

The trace follows the definitions that reach each use (`torchlint.flow`),
not source order. Alternatives (the definitions reaching one use from
different branches) must *all* be divided for the loss to count as divided:
`if use_amp: loss = loss / n` alone leaves the other path undivided. One
exception keeps the idiom `if accum > 1: loss = loss / accum` quiet: a
division whose branch tests the divisor itself, since dividing by 1 changes
nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, List, Optional, Tuple, Union

import libcst as cst

from torchlint.flow import Definition
from torchlint.names import ModuleNames, dotted_name, keyword, last_component, positional, slot_of, string_value
from torchlint.training.graph import FACTORIES
from torchlint.training.windows import is_number
from torchlint.walk import contains

if TYPE_CHECKING:
    from torchlint.training.loop import TrainingLoop

_RESHAPING_METHODS = ("float", "to", "cuda", "squeeze", "clone", "contiguous", "double", "half", "flatten", "view",
                      "reshape", "unsqueeze")
_COUNTS = frozenset({"sum", "numel", "size", "count_nonzero"})


@dataclass(frozen=True)
class LossOrigin:
    """Where a loss tensor comes from, as far as the loop body shows."""

    divided: bool = False
    reductions: FrozenSet[str] = frozenset()  # mean | sum | none | configured | unknown | outside
    sources: Tuple[str, ...] = ()
    weighted: bool = False  # multiplied by something of its own micro-batch: `loss * n_tokens`

    def merge(self, other: "LossOrigin") -> "LossOrigin":
        """Both parts of one value (`a + b`): divided (or weighted) if either part is."""
        sources = self.sources + tuple(s for s in other.sources if s not in self.sources)
        return LossOrigin(self.divided or other.divided, self.reductions | other.reductions, sources,
                          self.weighted or other.weighted)

    def either(self, other: "LossOrigin") -> "LossOrigin":
        """One of two values, by the path taken: divided (or weighted) only if both are. A constant (`0.0`,
        `torch.zeros_like(x)`: no reduction, no gradient) says nothing either way: the other value decides."""
        if not self.reductions and not self.sources:
            return other
        if not other.reductions and not other.sources:
            return self
        merged = self.merge(other)
        return replace(merged, divided=self.divided and other.divided, weighted=self.weighted and other.weighted)

    def as_divided(self) -> "LossOrigin":
        return replace(self, divided=True)

    @property
    def is_mean(self) -> bool:
        """Every known part is mean-reduced (PyTorch's default), nothing is summed."""
        known = self.reductions - {"outside"}
        return bool(known) and known <= {"mean", "unknown"}


_UNKNOWN = LossOrigin(reductions=frozenset({"unknown"}))
_OUTSIDE = LossOrigin(reductions=frozenset({"outside"}))


class _Cuts:
    """What the tracers of one trace (the loop's, and those of the functions it follows) share to know whether an
    answer may be given again: every key asked of `OriginTracer._active` (`asked`), and how many times the trace
    was cut short (`count`: too deep, or a definition or function met again while it is traced)."""

    __slots__ = ("asked", "count")

    def __init__(self) -> None:
        self.asked: List[int] = []
        self.count = 0


class OriginTracer:
    _MAX_DEPTH = 12

    def __init__(self, loop: "TrainingLoop", names: ModuleNames) -> None:
        self.loop = loop
        self.names = names
        self._active: set = set()  # definitions being traced: a nested loop's `loss += x` reaches itself
        # Where the files read in other files of the project are recorded: the linted file's (`ProjectFiles.used`).
        self._used = names.project.used if names.project is not None else None
        self._cuts = _Cuts()
        # (name, node) -> (depth, keys asked of `_active`, origin): a name's origin traced with nothing cut short,
        # given again where no deeper start and none of those keys being traced could cut it (a name read by many
        # terms of a long sum is otherwise traced once per path to it: exponentially many)
        self._answers: Dict[Tuple[str, int], Tuple[int, FrozenSet[int], LossOrigin]] = {}

    def trace(self, node: cst.BaseExpression, at: int, depth: int = 0) -> LossOrigin:
        """The origin of `node`'s value, evaluated at control-flow node `at`."""
        if depth > self._MAX_DEPTH:
            self._cuts.count += 1
            return _UNKNOWN
        depth += 1
        if is_number(node):
            return LossOrigin()
        if isinstance(node, cst.BinaryOperation):
            return self._binary(node, at, depth)
        if isinstance(node, cst.UnaryOperation):
            return self.trace(node.expression, at, depth)
        if isinstance(node, cst.Call):
            return self._call(node, at, depth)
        if isinstance(node, cst.IfExp):
            return self.trace(node.body, at, depth).either(self.trace(node.orelse, at, depth))
        if isinstance(node, cst.Attribute) and node.attr.value == "loss":
            return LossOrigin(reductions=frozenset({"mean"}), sources=(dotted_name(node) or "outputs.loss",))
        name = dotted_name(node)
        if name is not None:
            return self._name(name, at, depth)
        return _UNKNOWN

    def _binary(self, node: cst.BinaryOperation, at: int, depth: int) -> LossOrigin:
        operator = node.operator
        if isinstance(operator, (cst.Divide, cst.FloorDivide)):
            return self.trace(node.left, at, depth).as_divided()
        merged = self.trace(node.left, at, depth).merge(self.trace(node.right, at, depth))
        if isinstance(operator, cst.Multiply):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                if self.is_reciprocal(side, at):
                    return self.trace(other, at, depth).as_divided()
            if self._per_batch(node.left, at) or self._per_batch(node.right, at):
                return replace(merged, weighted=True)
        return merged

    def _per_batch(self, node: cst.BaseExpression, at: int, depth: int = 0) -> bool:
        """A count of this micro-batch: `mask.sum()`, `x.size(0)`, `len(batch)`, `labels.numel()`, or a name
        given one in the iteration on every path (`n_tokens = (labels != -100).sum()`; `factor = n_tokens
        if accumulate else 1.0`)."""
        if depth > 4:
            return False
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute):
                return func.attr.value in _COUNTS
            return dotted_name(func) == "len"
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute) \
                and node.value.attr.value == "shape":
            return True  # `x.shape[0]`
        if isinstance(node, cst.IfExp):
            return any(self._per_batch(part, at, depth + 1) for part in (node.body, node.orelse)) and all(
                is_number(part) or self._per_batch(part, at, depth + 1) for part in (node.body, node.orelse))
        if isinstance(node, cst.BinaryOperation):
            return self._per_batch(node.left, at, depth + 1) or self._per_batch(node.right, at, depth + 1)
        name = dotted_name(node)
        if name is None:
            return False
        definitions = self.loop.reaching(name, at)
        return bool(definitions) and all(
            d.kind == "assign" and d.value is not None and self._per_batch(d.value, d.node, depth + 1)
            for d in definitions)

    def is_reciprocal(self, node: cst.BaseExpression, at: int) -> bool:
        """`1 / n`, or a name holding it on every path: `loss_scale = 1.0 / accum` in the loop or before it."""
        if _is_reciprocal(node):
            return True
        name = dotted_name(node)
        if name is None:
            return False
        values = self.loop.values_at(name, at)
        return bool(values) and all(value is not None and _is_reciprocal(value) for value in values)

    def _call(self, node: cst.Call, at: int, depth: int, slot: Tuple[int, ...] = ()) -> LossOrigin:
        """The origin of a call's value; `slot`: the element of what it returns an unpacking takes
        (`loss, items = compute_loss(pred, y)` takes `(0,)`)."""
        func = node.func
        qualified = self.names.callee(node)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = func.value
            if method in ("div", "div_", "true_divide"):
                return self.trace(receiver, at, depth).as_divided()
            factor = positional(node, 0)
            if method in ("mul", "mul_", "multiply") and factor is not None and qualified is None:
                # `loss.sum().mul(scale / total)` is `loss.sum() * (scale / total)`
                return self._binary(cst.BinaryOperation(receiver, cst.Multiply(), factor), at, depth)
            if method in ("mean", "sum") and qualified is None:
                traced = self.trace(receiver, at, depth)
                if "none" in traced.reductions:
                    return LossOrigin(traced.divided, (traced.reductions - {"none"}) | {method}, traced.sources)
                return traced
            if method in _RESHAPING_METHODS:
                return self.trace(receiver, at, depth)
            if _scaled_by_scaler(node):  # `scaled = scaler.scale(loss / n)`: the loss, as `scaler.scale(...).backward()`
                return self.trace(positional(node, 0), at, depth)
        if qualified in ("torch.div", "torch.true_divide"):
            first = positional(node, 0)
            return (self.trace(first, at, depth) if first is not None else LossOrigin()).as_divided()
        if qualified in ("torch.mean", "torch.sum") and positional(node, 0) is not None:
            traced = self.trace(positional(node, 0), at, depth)
            kind = last_component(qualified)
            return LossOrigin(traced.divided, (traced.reductions - {"none"}) | {kind}, traced.sources)
        if qualified == "torch.where" and positional(node, 2) is not None:
            return self.trace(positional(node, 1), at, depth).either(self.trace(positional(node, 2), at, depth))
        if qualified is not None and qualified.startswith("torch.") and last_component(qualified) in FACTORIES:
            return LossOrigin()  # `torch.zeros(1)` that loss terms are added to: no reduction of its own
        if qualified is not None and self.names.is_loss_function(qualified):
            return LossOrigin(reductions=frozenset({reduction(node)}), sources=(dotted_name(func) or qualified,))
        if isinstance(func, cst.Call):
            constructor = self.names.callee(func)
            if constructor is not None and self.names.is_loss_class(constructor):
                return LossOrigin(reductions=frozenset({reduction(func)}), sources=(dotted_name(func.func) or "",))
        callee = dotted_name(func)
        if callee is not None:
            reductions = set()
            for value in self.names.values_of(callee):
                if isinstance(value, cst.Call):
                    constructor = self.names.callee(value)
                    if constructor is not None and self.names.is_loss_class(constructor):
                        reductions.add(reduction(value))
            if reductions:
                return LossOrigin(reductions=frozenset(reductions), sources=(callee,))
            returned = self._returned(callee, depth, slot, at)
            if returned is None:
                returned = self._returned_elsewhere(callee, depth, slot)
            if returned is not None:
                return returned
        return LossOrigin(reductions=frozenset({"unknown"}), sources=(callee or "a call",))

    def _returned(self, callee: str, depth: int, slot: Tuple[int, ...] = (), at: int = -1) -> Optional[LossOrigin]:
        """What a function of this file returns (`compute_loss(model, batch)`, or the `forward` of an object of a
        class of this file that `callee` holds at node `at`), traced in its own body: divided only if every
        `return` is."""
        functions = getattr(self.loop, "functions", None)
        if functions is None:
            return None
        function = functions.by_name(callee) or self._object_call(callee, functions, at)
        if function is None:
            return None
        traced = self._traced_returns(function, functions, self.names, depth, slot)
        # A value its body does not name (`model(samples)["loss"]`) is named by the call the loop makes.
        named = traced is not None and traced.reductions and not traced.sources
        return replace(traced, sources=(callee,)) if named else traced

    def _object_call(self, callee: str, functions, at: int) -> Optional[cst.FunctionDef]:
        """`criterion = SSDLoss(...)`, then `criterion(...)`: the `__call__` (or the module's `forward`) of that
        class of this file, which the call runs (the same-file twin of `_returned_elsewhere`'s built objects).
        The values `callee` may hold at `at`, or for a name this function does not bind (`self.criterion`),
        the file's one binding of it."""
        values = self.loop.values_at(callee, at) if at >= 0 else []
        if not values:
            values = self.names.values_of(callee)
            if len(values) != 1:
                return None
        constructors = {dotted_name(value.func) if isinstance(value, cst.Call) else None for value in values}
        if len(constructors) != 1:
            return None
        constructor = constructors.pop()
        if constructor is None or "." in constructor:
            return None
        return functions.method_of_class(constructor, "__call__") or functions.method_of_class(constructor, "forward")

    def _returned_elsewhere(self, callee: str, depth: int, slot: Tuple[int, ...]) -> Optional[LossOrigin]:
        """What a function of another file of the project returns (`masked_mean(...)` imported from it), or the
        `__call__`/`forward` of an object built from a class of another file (`compute_loss =
        ComputeLoss(model)`, then `compute_loss(pred, targets)`), traced in that file."""
        project = self.names.project
        if project is None:
            return None
        target = self.names.imported(callee)
        built = False  # `compute_loss = ComputeLoss(model)`: the call runs the object's `__call__`
        if target is None:
            values = self.names.values_of(callee)
            constructor = dotted_name(values[0].func) if len(values) == 1 and isinstance(values[0], cst.Call) \
                else None
            target = self.names.imported(constructor) if constructor is not None else None
            built = True
        found = project.read_definition(target, self._used)
        if found is None:
            return None
        module, definition = found
        if isinstance(definition, cst.ClassDef):
            if not built:
                return None  # `ComputeLoss(model)` itself builds an object, not a loss
            name = definition.name.value
            definition = module.functions.method_of_class(name, "__call__") \
                or module.functions.method_of_class(name, "forward")
        if not isinstance(definition, cst.FunctionDef):
            return None
        traced = self._traced_returns(definition, module.functions, module.names, depth, slot)
        # Named by the call the loop makes: its parts live in the other file.
        return replace(traced, sources=(callee,)) if traced is not None else None

    def _traced_returns(self, function: cst.FunctionDef, functions, names: ModuleNames, depth: int,
                        slot: Tuple[int, ...]) -> Optional[LossOrigin]:
        self._cuts.asked.append(id(function))
        if id(function) in self._active:
            self._cuts.count += 1
            return None
        from torchlint.training.calls import Scope

        returns = functions.returns(function)
        if not returns:
            return None
        self._active.add(id(function))
        try:
            inner = OriginTracer(Scope(function, functions.flow(function), functions), names)
            inner._active = self._active
            inner._cuts = self._cuts
            inner._used = self._used
            result: Optional[LossOrigin] = None
            for value, node in returns:
                part = slot_of(value, slot)
                if part is None:
                    return None
                traced = inner.trace(part, node, depth)
                result = traced if result is None else result.either(traced)
        finally:
            self._active.discard(id(function))
        return result

    def _name(self, name: str, at: int, depth: int) -> LossOrigin:
        key = (name, at)
        known = self._answers.get(key)
        if known is not None and depth <= known[0] and known[1].isdisjoint(self._active):
            self._cuts.asked.extend(known[1])  # what the answer rests on, the callers' answers rest on
            return known[2]
        cuts = self._cuts
        mark, count = len(cuts.asked), cuts.count
        result = self._traced_name(name, at, depth)
        if cuts.count == count and (known is None or depth > known[0]):
            self._answers[key] = (depth, frozenset(cuts.asked[mark:]), result)
        return result

    def _traced_name(self, name: str, at: int, depth: int) -> LossOrigin:
        definitions = self.loop.reaching(name, at)
        if not definitions:
            return _OUTSIDE
        result: Optional[LossOrigin] = None
        for definition in definitions:
            self._cuts.asked.append(definition.index)
            if definition.index in self._active:
                self._cuts.count += 1
                continue
            self._active.add(definition.index)
            try:
                traced = self._definition(definition, depth)
            finally:
                self._active.discard(definition.index)
            result = traced if result is None else result.either(traced)
        if result is not None and not result.divided and any(self._divides_when_needed(d) for d in definitions):
            result = result.as_divided()
        return result if result is not None else _OUTSIDE

    def _definition(self, definition: Definition, depth: int) -> LossOrigin:
        if definition.kind == "start" or definition.value is None:
            return _OUTSIDE
        value, at = definition.value, definition.node
        operator = definition.operator
        if definition.kind == "augmented":
            before = self._name(definition.name, at, depth)
            if operator in ("/=", "//="):
                return before.as_divided()
            if operator == "*=" and self.is_reciprocal(value, at):
                return before.as_divided()
            if operator in ("+=", "-=", "*="):
                return before.merge(self.trace(value, at, depth))
            return before
        if definition.kind != "assign":
            return _OUTSIDE
        if definition.unpacked and definition.position and isinstance(value, cst.Call):
            return self._call(value, at, depth + 1, definition.position)
        return self.trace(value, at, depth)

    def _divides_when_needed(self, definition: Definition) -> bool:
        """`if accum > 1: loss = loss / accum`: the path that skips the division divides by 1."""
        divisor = _divisor(definition)
        if divisor is None:
            return False
        for guard in self.loop.guards_at(definition.node):
            if contains(guard.test, divisor):
                return True
        return False


def _scaled_by_scaler(call: cst.Call) -> bool:
    """`scaler.scale(loss)`: the loss times the scaler's factor, which `scaler.step` divides out again (the shape
    `roles.classify_backward` reads as a scaler's backward when `.backward()` is called on it directly)."""
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "scale" \
        and dotted_name(call.func.value) is not None and len(call.args) == 1 and positional(call, 0) is not None


def _divisor(definition: Definition) -> Optional[cst.BaseExpression]:
    value = definition.value
    if definition.kind == "augmented" and definition.operator in ("/=", "//="):
        return value
    if definition.kind == "assign" and isinstance(value, cst.BinaryOperation) \
            and isinstance(value.operator, (cst.Divide, cst.FloorDivide)) and dotted_name(value.left) == definition.name:
        return value.right
    return None




def _is_reciprocal(node: cst.BaseExpression) -> bool:
    return (
        isinstance(node, cst.BinaryOperation)
        and isinstance(node.operator, cst.Divide)
        and isinstance(node.left, (cst.Integer, cst.Float))
        and float(node.left.value) == 1.0
    )


def reduction(call: cst.Call) -> str:
    given = keyword(call, "reduction")
    value = string_value(given)
    if value in ("sum", "none", "mean"):
        return value
    if value is not None:
        return "mean" if value == "batchmean" else "unknown"  # `KLDivLoss(reduction="batchmean")`
    if given is not None or any(arg.star == "**" for arg in call.args):
        return "configured"  # `reduction=args.reduction`, `**loss_kwargs`: chosen by the run, not known here
    size_average, reduce = _flag(keyword(call, "size_average")), _flag(keyword(call, "reduce"))
    if reduce is False:
        return "none"
    if "unknown" in (reduce, size_average):
        return "configured"
    return "sum" if size_average is False else "mean"


def _flag(node: Optional[cst.BaseExpression]) -> Union[bool, None, str]:
    """A legacy `size_average=` / `reduce=` argument: True, False, None when absent (or `None`), else "unknown"."""
    if node is None or (isinstance(node, cst.Name) and node.value == "None"):
        return None
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return "unknown"


# --- where a loss is divided ------------------------------------------------------------------


@dataclass(frozen=True)
class Division:
    """One place a loss is divided on its way to a backward: `loss / n`, `loss.div(n)`, `loss * (1 / n)`,
    `loss /= n`. `node` is the dividing expression, or the `loss /= n` statement; `statement` the line
    that holds it; `definition` the assignment it is the value of (`loss = loss / n`), if any."""

    node: cst.CSTNode
    dividend: cst.BaseExpression
    divisor: cst.BaseExpression
    at: int  # the control-flow node where it runs
    statement: Optional[cst.CSTNode] = None
    definition: Optional[Definition] = None


Reaching = Callable[[str, int], List[Definition]]


class DivisionFinder:
    """The divisions a value goes through, following the definitions that reach each name read.

    `reaching(name, node)` gives the definitions of `name` that may reach `node`: a loop iteration's
    (`TrainingLoop.reaching`) or a whole function's (`FunctionFlow.reaching`). A division on any of
    the paths is found; the caller decides what each divides by.
    """

    _MAX_DEPTH = 12

    def __init__(self, reaching: Reaching, lines: Callable[[int], Optional[cst.CSTNode]]) -> None:
        self.reaching = reaching
        self.lines = lines  # control-flow node -> the statement line it belongs to
        self._active: set = set()

    def find(self, node: cst.BaseExpression, at: int, depth: int = 0) -> List[Division]:
        if depth > self._MAX_DEPTH:
            return []
        depth += 1
        if isinstance(node, cst.BinaryOperation):
            operator = node.operator
            if isinstance(operator, cst.Divide):
                return [Division(node, node.left, node.right, at, self.lines(at))] + self.find(node.left, at, depth)
            if isinstance(operator, cst.Multiply):
                for side, other in ((node.left, node.right), (node.right, node.left)):
                    divisor = self._reciprocal_of(side, at)
                    if divisor is not None:
                        return [Division(node, other, divisor, at, self.lines(at))] + self.find(other, at, depth)
            if isinstance(operator, (cst.Add, cst.Subtract, cst.Multiply)):
                return self.find(node.left, at, depth) + self.find(node.right, at, depth)
            return []
        if isinstance(node, cst.UnaryOperation):
            return self.find(node.expression, at, depth)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            method, receiver = node.func.attr.value, node.func.value
            if method in ("div", "true_divide") and positional(node, 0) is not None:
                return [Division(node, receiver, positional(node, 0), at, self.lines(at))] + self.find(receiver, at, depth)
            if method in _RESHAPING_METHODS or method in ("mean", "sum"):
                return self.find(receiver, at, depth)
            if _scaled_by_scaler(node):
                return self.find(positional(node, 0), at, depth)
            return []
        name = dotted_name(node)
        if name is None:
            return []
        found: List[Division] = []
        for definition in self.reaching(name, at):
            if definition.index in self._active or definition.value is None:
                continue
            self._active.add(definition.index)
            try:
                found += self._definition(definition, depth)
            finally:
                self._active.discard(definition.index)
        return found

    def _definition(self, definition: Definition, depth: int) -> List[Division]:
        value, at = definition.value, definition.node
        if definition.kind == "assign" and not definition.unpacked:
            return [replace(division, definition=division.definition or (definition if division.node is value else None))
                    for division in self.find(value, at, depth)]
        if definition.kind != "augmented":
            return []
        before = self.find(cst.Name(definition.name) if "." not in definition.name else _dotted(definition.name),
                           at, depth)
        target = _dotted(definition.name)
        if definition.operator == "/=":
            return [Division(definition.syntax, target, value, at, self.lines(at), definition)] + before
        if definition.operator == "*=":
            divisor = self._reciprocal_of(value, at)
            if divisor is not None:
                return [Division(definition.syntax, target, divisor, at, self.lines(at), definition)] + before
        return before + (self.find(value, at, depth) if definition.operator in ("+=", "-=") else [])

    def _reciprocal_of(self, node: cst.BaseExpression, at: int) -> Optional[cst.BaseExpression]:
        """`n` for `1 / n`, or for a name holding it on every path (`scale = 1.0 / accum`)."""
        if _is_reciprocal(node):
            return node.right
        name = dotted_name(node)
        if name is None:
            return None
        definitions = self.reaching(name, at)
        values = [d.value for d in definitions if d.kind == "assign" and not d.unpacked]
        if not values or len(values) != len(definitions) or not all(_is_reciprocal(v) for v in values):
            return None
        first = values[0].right
        return first if all(v.right.deep_equals(first) for v in values[1:]) else None


def _dotted(name: str) -> cst.BaseExpression:
    parts = name.split(".")
    node: cst.BaseExpression = cst.Name(parts[0])
    for part in parts[1:]:
        node = cst.Attribute(node, cst.Name(part))
    return node
