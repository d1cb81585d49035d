"""How many tokens a micro-batch's targets hold: a count that cannot vary when they are cut from one packed stream.

Language-model code that packs its corpus into one stream of token ids cuts
each micro-batch's inputs and targets from it at a fixed length, the targets
one token after the inputs:

- `x = data[i : i + block]` and `y = data[i + 1 : i + 1 + block]`;
- nanoGPT's `get_batch`: `torch.stack([data[j + 1 : j + 1 + block_size] for j in ix])`
  with `ix = torch.randint(..., (batch_size,))`;
- `buf = tokens[p : p + B * T + 1]`, then `x = buf[:-1].view(B, T)` and `y = buf[1:].view(B, T)`;
- a batch of packed blocks cut along its last axis: `x = batch[:, 0 : block]`, `y = batch[:, 1 : block + 1]`;

in the loop, or in a function (or a method of an object) of the file that
returns the pair. Every micro-batch then holds the same number of targets,
and a tokenizer's ids hold no ignored label, whatever `ignore_index=` the
criterion is given: a token mean divided by the accumulation count is the
window's token mean.

`fixed_token_count` answers yes only when the code shows all of it: every
value the targets may have is such a cut (through conversions that keep the
elements: `.view(-1)`, `.to(device)`, `torch.from_numpy(...)`,
`.astype(np.int64)`), its length is the same on every micro-batch (numbers,
and names not assigned anew in the loop nor taken from a function's
parameters), another cut of the same stream exists beside it (the inputs:
targets cut from a separate label stream may hold ignored labels), and
nothing writes into the targets in place (`y[mask] = -100`). Anything else
is unknown, and a rule that needs the count to vary reads its own evidence
(padding collators, masks, `ignore_index`).

A slice near the end of the stream would come out shorter; the cut is taken
as fixed, as the code that samples its start (`torch.randint(len(data) - block, ...)`)
means it to be.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Tuple

import libcst as cst

from torchlint.flow import FunctionFlow
from torchlint.names import ModuleNames, dotted_name, int_value, keyword, positional, slot_of
from torchlint.walk import preorder

if TYPE_CHECKING:
    from torchlint.training.calls import Functions
    from torchlint.training.loop import TrainingLoop

# Methods and functions whose result holds the same elements as their argument, in another shape or place.
_KEEPING_METHODS = frozenset({
    "view", "reshape", "flatten", "contiguous", "to", "cuda", "cpu", "long", "int", "pin_memory", "astype",
    "type", "clone", "detach", "numpy", "unsqueeze", "squeeze",
})
_KEEPING_FUNCTIONS = frozenset({
    "torch.from_numpy", "torch.as_tensor", "torch.tensor", "numpy.array", "numpy.asarray",
    "numpy.ascontiguousarray",
})
_STACKING = frozenset({"torch.stack", "numpy.stack"})
_SAMPLERS = frozenset({"torch.randint", "numpy.random.randint"})
_MAX_DEPTH = 16
_CODE = cst.Module(body=[])


@dataclass(frozen=True)
class _Scope:
    """Where a value is read: a loop's function (`region`: the loop's body nodes), or a function it calls."""

    flow: FunctionFlow
    owner: cst.CSTNode  # the function (or module) whose graph `flow` is
    region: FrozenSet[int] = frozenset()  # the loop body: a name set outside it keeps its value through the loop
    in_loop: bool = False


def fixed_token_count(loop: "TrainingLoop", targets: Optional[cst.BaseExpression], at: int) -> bool:
    """The targets `targets` (read at control-flow node `at` of the loop's function) hold the same number of
    tokens on every micro-batch: cut at a fixed length from one packed stream. False when unknown."""
    if targets is None or loop.names is None:
        return False
    if loop.iteration is None:  # a function the loop calls (a model's `forward`): its own body only
        scope = _Scope(loop.flow, loop.flow.graph.owner)
    else:
        scope = _Scope(loop.flow, loop.flow.graph.owner, frozenset(loop.iteration.region.body), True)
    return _Cuts(loop.names, loop.functions).fixed(targets, scope, at, True, 0)


def same_every_micro_batch(loop: "TrainingLoop", node: cst.BaseExpression, at: int) -> bool:
    """`node` (read at control-flow node `at`) has the same value on every micro-batch: a number, or names set
    before the loop or never in the function (`args.lm_coef`), not a parameter of a function the loop calls.
    False when unknown."""
    if loop.names is None:
        return False
    if loop.iteration is None:
        scope = _Scope(loop.flow, loop.flow.graph.owner)
    else:
        scope = _Scope(loop.flow, loop.flow.graph.owner, frozenset(loop.iteration.region.body), True)
    return _Cuts(loop.names, loop.functions).invariant(node, scope, at, numbers=True)


class _Cuts:
    def __init__(self, names: ModuleNames, functions: Optional["Functions"]) -> None:
        self.names = names
        self.functions = functions
        self._active: set = set()  # the definitions and functions being followed (a definition per graph)

    def fixed(self, node: cst.BaseExpression, scope: _Scope, at: int, paired: bool, depth: int) -> bool:
        """`node` holds a fixed number of a packed stream's tokens; `paired`: its outermost cut still has to
        show the other cut of the same stream (the inputs)."""
        if depth > _MAX_DEPTH:
            return False
        depth += 1
        if isinstance(node, cst.Subscript):
            return self._cut(node, scope, at, paired, depth)
        if isinstance(node, cst.Call):
            return self._call(node, scope, at, paired, depth)
        name = dotted_name(node)
        if name is None or _written_in_place(scope.owner, name):
            return False
        definitions = scope.flow.reaching(at, name)
        if not definitions:
            return False
        for definition in definitions:
            if definition in self._active or definition.value is None or definition.kind != "assign":
                return False
            self._active.add(definition)
            try:
                if definition.unpacked:
                    found = self._unpacked(definition.value, definition.position, scope, definition.node, paired,
                                           depth)
                else:
                    found = self.fixed(definition.value, scope, definition.node, paired, depth)
            finally:
                self._active.discard(definition)
            if not found:
                return False
        return True

    def _call(self, call: cst.Call, scope: _Scope, at: int, paired: bool, depth: int) -> bool:
        func = call.func
        qualified = self.names.callee(call)
        if isinstance(func, cst.Attribute) and func.attr.value in _KEEPING_METHODS and qualified is None:
            return self.fixed(func.value, scope, at, paired, depth)
        first = positional(call, 0)
        if qualified in _KEEPING_FUNCTIONS and first is not None:
            return self.fixed(first, scope, at, paired, depth)
        if qualified in _STACKING and first is not None:
            return self._stacked(first, scope, at, paired, depth)
        return False

    def _stacked(self, rows: cst.BaseExpression, scope: _Scope, at: int, paired: bool, depth: int) -> bool:
        """`torch.stack([data[j + 1 : j + 1 + block] for j in ix])`: a fixed number of fixed cuts."""
        if isinstance(rows, (cst.List, cst.Tuple)):
            return bool(rows.elements) and all(
                not isinstance(element, cst.StarredElement) and self.fixed(element.value, scope, at, paired, depth)
                for element in rows.elements)
        if not isinstance(rows, (cst.ListComp, cst.GeneratorExp)):
            return False
        loop = rows.for_in
        if loop.inner_for_in is not None or loop.ifs:
            return False
        return self._fixed_count(loop.iter, scope, at, depth) and self.fixed(rows.elt, scope, at, paired, depth)

    def _fixed_count(self, iterable: cst.BaseExpression, scope: _Scope, at: int, depth: int) -> bool:
        """`ix` holds as many elements on every micro-batch: `torch.randint(high, (batch_size,))`, `range(n)`."""
        if depth > _MAX_DEPTH:
            return False
        name = dotted_name(iterable)
        if name is not None:
            definitions = scope.flow.reaching(at, name)
            return bool(definitions) and all(
                d.kind == "assign" and not d.unpacked and d.value is not None
                and self._fixed_count(d.value, scope, d.node, depth + 1) for d in definitions)
        if not isinstance(iterable, cst.Call):
            return False
        if dotted_name(iterable.func) == "range":
            return bool(iterable.args) and all(self.invariant(arg.value, scope, at) for arg in iterable.args)
        if self.names.callee(iterable) in _SAMPLERS:
            size = keyword(iterable, "size") or positional(iterable, 2 if positional(iterable, 2) is not None else 1)
            if isinstance(size, cst.Tuple):
                return bool(size.elements) and all(self.invariant(e.value, scope, at) for e in size.elements)
            return size is not None and self.invariant(size, scope, at)
        return False

    def _cut(self, node: cst.Subscript, scope: _Scope, at: int, paired: bool, depth: int) -> bool:
        """`data[i + 1 : i + 1 + block]` (a length that does not vary), or `buf[1:]` / `chunk[:, :-1]` of a fixed
        cut; with `paired`, beside another cut of the same stream (`data[i : i + block]`, `buf[:-1]`)."""
        elements = [element.slice for element in node.slice]
        base = dotted_name(node.value)
        if paired and (base is None or not _cut_again(scope.owner, node, base)):
            return False
        # The cut is the last axis's; the axes before it are taken whole (`batch[:, 1 : block + 1]`: every row of
        # a batch of blocks, cut at a fixed length).
        last = elements[-1]
        whole_rows = all(isinstance(element, cst.Slice) and element.lower is None and element.upper is None
                         and element.step is None for element in elements[:-1])
        if whole_rows and isinstance(last, cst.Slice) and last.step is None \
                and last.lower is not None and last.upper is not None:
            length = _difference(last.upper, last.lower)
            if length is not None and length[1] and all(
                    self.invariant(atom, scope, at) for atom in length[0]):
                return True
        if not all(_constant_bounds(element) for element in elements):
            return False
        return self.fixed(node.value, scope, at, False, depth)

    def _unpacked(self, value: cst.BaseExpression, position: Optional[Tuple[int, ...]], scope: _Scope, at: int,
                  paired: bool, depth: int) -> bool:
        """`X, Y = get_batch("train")`, `x, y = loader.next_batch()`: what the function returns there, on
        every `return`."""
        if not position or not isinstance(value, cst.Call) or self.functions is None:
            return False
        function = self._function_of(value, scope)
        if function is None or id(function) in self._active:
            return False
        returns = self.functions.returns(function)
        if not returns:
            return False
        inner = _Scope(self.functions.flow(function), function)
        self._active.add(id(function))
        try:
            for returned, node in returns:
                element = slot_of(returned, position)
                if element is None or not self.fixed(element, inner, node, paired, depth):
                    return False
        finally:
            self._active.discard(id(function))
        return True

    def _function_of(self, call: cst.Call, scope: _Scope) -> Optional[cst.FunctionDef]:
        """The function of this file `call` runs: `get_batch(...)`, `self.next_batch()`, or a method of an object
        the file builds once from a class of its own (`train_loader = DataLoaderLite(B, T)`)."""
        caller = scope.owner if isinstance(scope.owner, cst.FunctionDef) else None
        function = self.functions.callee(call, caller)
        if function is not None:
            return function
        func = call.func
        if not isinstance(func, cst.Attribute):
            return None
        receiver = dotted_name(func.value)
        built = self.names.values_of(receiver) if receiver is not None else []
        if len(built) != 1 or not isinstance(built[0], cst.Call):
            return None
        class_name = dotted_name(built[0].func)
        return self.functions.method_of_class(class_name, func.attr.value) if class_name is not None else None

    def invariant(self, node: cst.BaseExpression, scope: _Scope, at: int, depth: int = 0,
                  numbers: bool = False) -> bool:
        """`node` has the same value on every micro-batch: numbers, and names that keep theirs (set before the
        loop, a module constant, an attribute the function does not assign; not a function's parameter).
        `numbers`: any number (`0.5`, a coefficient), any arithmetic, and no attribute of a name the iteration
        binds or of a parameter (`batch.n_tokens`: the micro-batch's own), rather than a length's terms."""
        if depth > _MAX_DEPTH:
            return False
        depth += 1
        if int_value(node) is not None or (numbers and isinstance(node, cst.Float)):
            return True
        operators = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide) + ((cst.Divide,) if numbers else ())
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, operators):
            return self.invariant(node.left, scope, at, depth, numbers) \
                and self.invariant(node.right, scope, at, depth, numbers)
        if isinstance(node, cst.Call) and dotted_name(node.func) == "int" and len(node.args) == 1:
            return self.invariant(node.args[0].value, scope, at, depth, numbers)
        name = dotted_name(node)
        if name is None:
            return False
        root = name.split(".", 1)[0]
        if numbers and root not in (name, "self"):
            for definition in scope.flow.reaching(at, root):
                if definition.node in scope.region if scope.in_loop else definition.kind == "parameter":
                    return False
        for definition in scope.flow.reaching(at, name):
            if scope.in_loop and definition.node not in scope.region:
                continue  # set before the loop: the same on every micro-batch
            if definition.kind != "assign" or definition.unpacked or definition.value is None \
                    or not self.invariant(definition.value, scope, definition.node, depth, numbers):
                return False
        return True


def _difference(upper: cst.BaseExpression, lower: cst.BaseExpression
                ) -> Optional[Tuple[List[cst.BaseExpression], bool]]:
    """`upper - lower` as the terms that do not cancel, and whether it is non-zero: `i + 1 + block` minus
    `i + 1` leaves `block`. None when a term is not a sum of simpler ones."""
    terms: Dict[str, Tuple[cst.BaseExpression, int]] = {}
    constant = [0]

    def add(node: cst.BaseExpression, sign: int) -> None:
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract)):
            add(node.left, sign)
            add(node.right, sign if isinstance(node.operator, cst.Add) else -sign)
            return
        number = int_value(node)
        if number is not None:
            constant[0] += sign * number
            return
        key = _CODE.code_for_node(node.with_changes(lpar=[], rpar=[]) if hasattr(node, "lpar") else node)
        expression, count = terms.get(key, (node, 0))
        terms[key] = (expression, count + sign)

    add(upper, 1)
    add(lower, -1)
    left = [expression for expression, count in terms.values() if count != 0]
    return left, bool(left) or constant[0] != 0


def _constant_bounds(element: cst.BaseSlice) -> bool:
    """`:`, `1:`, `:-1`, `2`: a part of a fixed cut that is fixed too."""
    if isinstance(element, cst.Index):
        return int_value(element.value) is not None
    return all(bound is None or int_value(bound) is not None for bound in (element.lower, element.upper, element.step))


def _cut_again(owner: cst.CSTNode, cut: cst.Subscript, base: str) -> bool:
    """Another cut of the stream `base` in the same function: the inputs beside the targets."""
    return any(isinstance(part, cst.Subscript) and part is not cut and dotted_name(part.value) == base
               and any(isinstance(element.slice, cst.Slice) for element in part.slice)
               and not (len(part.slice) == len(cut.slice)
                        and all(a.deep_equals(b) for a, b in zip(part.slice, cut.slice)))
               for part in preorder(owner))


def _written_in_place(owner: cst.CSTNode, name: str) -> bool:
    """Something writes into `name`'s elements in the function: `y[mask] = -100`, `y.masked_fill_(...)`."""
    for part in preorder(owner):
        if isinstance(part, (cst.Assign, cst.AugAssign)):
            targets = [t.target for t in part.targets] if isinstance(part, cst.Assign) else [part.target]
            if any(isinstance(t, cst.Subscript) and dotted_name(t.value) == name for t in targets):
                return True
        elif isinstance(part, cst.Call) and isinstance(part.func, cst.Attribute) \
                and dotted_name(part.func.value) == name:
            method = part.func.attr.value
            if method.endswith("_") and not method.startswith("_"):
                return True
    return False
