"""Accumulation windows: the counters that number micro-batches and the conditions that step once a window.

A counter is the `i` of `enumerate(loader)`, of `range(...)`, of
`itertools.count()`, or a name incremented by one on every iteration
(`micro += 1`). A window condition lets the step through once every N
micro-batches: `(i + 1) % N == 0`, `i % N == N - 1`, `not i % N`,
`micro == N`; or, negated, `if i % N != 0: continue`. The condition may be
held in a name assigned in the iteration (`is_accumulating = i % N != 0`
... `if not is_accumulating:`).

A window may also be written as a loop of its own (`InnerWindow`): each
iteration backpropagates one micro-batch and the optimizer steps once, after
the loop. `inner_count` reads from the loop's header how many micro-batches
that is: `for _ in range(grad_accum)` over micro-batches the body draws,
slices of one batch (`for s in range(0, len(x), m)` over `x[s:s + m]`), or
its chunks (`zip(x.chunk(k), y.chunk(k))`, `x.split(m)`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Optional, Tuple

import libcst as cst

from torchlint.flow.cfg import block_of
from torchlint.names import ModuleNames, dotted_name, int_value, is_true, keyword, last_component, positional
from torchlint.training.sites import Assignment, Guard, StepSite
from torchlint.walk import children, preorder

# Wrappers around an iterable that keep its elements and their order.
_PASS_THROUGH_WRAPPERS = frozenset({"tqdm", "trange", "track", "progress", "iter", "list", "islice"})
_ENDLESS_ITERATORS = frozenset({"itertools.cycle", "itertools.repeat", "itertools.count"})
_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
_DATASETS = frozenset({"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"})


@dataclass(frozen=True)
class LoopCounter:
    """A name that counts micro-batches, and its value on the first one."""

    name: str
    start: Optional[int]  # None when the start cannot be read from the code
    source: str  # enumerate | range | count | manual
    increment: Optional[Assignment] = None  # the `name += 1` of a manual counter
    origin: Optional[cst.CSTNode] = None  # what to quote: `enumerate(loader)`
    iterable: Optional[cst.BaseExpression] = None  # `loader` in `enumerate(tqdm(loader))`
    endless: bool = False  # `enumerate(itertools.cycle(loader))`: there is no last micro-batch
    resumed: bool = False  # `start` is the fresh run's: a resume restores the count (`step = ckpt["step"]`)
    # An attribute counter of a method that is a loop's body (`self.n_iter`), set back to its start by a method
    # the calling loop's function calls right after that loop (`learner.end_epoch()`) with no step between:
    # its windows start again in each epoch, as an `enumerate` counter's do.
    restarted_after: Optional[cst.CSTNode] = None  # that call's statement


@dataclass(frozen=True)
class AccumulationCheck:
    """A condition that lets the step through once per accumulation window.

    `kind` is `modulo` (`i % N == 0`, `(i + 1) % N == 0`, `i % N == N - 1`,
    `not i % N`) or `count` (`micro == N`, `micro >= N`). `negated` when the
    step runs where `expression` is false: in the `else` of `if i % N != 0:`,
    or after `if i % N: continue`.
    """

    kind: str
    expression: cst.BaseExpression  # the comparison (or `not`) to rewrite
    operand: cst.BaseExpression  # `i` or `(i + 1)`
    counter: Optional[str]
    offset: int
    count: cst.BaseExpression
    remainder: str  # zero | last | other | count
    guard: Guard
    negated: bool = False
    held_at: int = -1  # the control-flow node of `flag = i % N != 0` when the `if` tests `flag`
    held: Optional[cst.BaseExpression] = None  # the condition the flag holds, `i % N != 0`
    flag: Optional[str] = None  # `is_accumulating`
    # The call of a method of the file the condition is read through (`batch_idx.is_interval(N)`, returning
    # `(self.idx + 1) % interval == 0`): `expression` is that call; what counts the micro-batches is the
    # object's state, whose value on the first one is not read (`counter` is None).
    through: Optional[cst.Call] = None

    @property
    def condition(self) -> cst.BaseExpression:
        """The whole condition the check is part of: the `if`'s test, or what its flag holds."""
        return self.held if self.held is not None else self.guard.test

    def same_window(self, other: "AccumulationCheck") -> bool:
        """Both conditions let the step through on the same micro-batches' kind of window: the same
        counter and count (`(i + 1) % n == 0` and `(i + 1) % n == 0 or last`)."""
        return self.kind == other.kind and self.count.deep_equals(other.count) and self.counter == other.counter

    def read_at(self, fallback):
        """Where the counter is read: the flag's assignment, else `fallback` (the guarded site)."""
        return self.held_at if self.held_at >= 0 else fallback


# A name tested by an `if` -> the condition it holds and the node that assigns it, when one
# assignment in the iteration gives it its value on every path.
Resolver = Callable[[str], Optional[Tuple[cst.BaseExpression, int]]]


def checks_in(test: cst.BaseExpression, guard: Guard, holds: bool = True,
              resolve: Optional[Resolver] = None,
              expand: Optional[Callable[[cst.Call], Optional[cst.BaseExpression]]] = None
              ) -> Iterable[AccumulationCheck]:
    """Window conditions in `test`; `holds` is False when the step runs where `test` is false. `resolve`
    reads a flag (`if not is_accumulating:`) as the condition assigned to it (once, not through flags);
    `expand` a call of a method of the file as the condition it returns, in the caller's terms."""
    if isinstance(test, cst.BooleanOperation):
        yield from checks_in(test.left, guard, holds, resolve, expand)
        yield from checks_in(test.right, guard, holds, resolve, expand)
        return
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        if _is_modulo(test.expression) and holds:
            yield _modulo_check(test, test.expression, "zero", guard)
        else:
            yield from checks_in(test.expression, guard, not holds, resolve, expand)
        return
    if isinstance(test, cst.Name) and resolve is not None:
        held = resolve(test.value)
        if held is not None:
            for check in checks_in(held[0], guard, holds, expand=expand):
                yield dataclasses.replace(check, held_at=held[1], held=held[0], flag=test.value)
        return
    if isinstance(test, cst.Call) and expand is not None:
        returned = expand(test)
        if returned is not None:
            for check in checks_in(returned, guard, holds):
                yield dataclasses.replace(check, expression=test, counter=None, through=test)
        return
    if _is_modulo(test) and not holds:  # `if i % N: continue` steps when `i % N == 0`
        yield _modulo_check(test, test, "zero", guard, negated=True)
        return
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return
    target = test.comparisons[0]
    left, right = test.left, target.comparator
    equal = cst.Equal if holds else cst.NotEqual
    if isinstance(target.operator, equal):
        for modulo, other in ((left, right), (right, left)):
            if _is_modulo(modulo):
                yield _modulo_check(test, modulo, _remainder_kind(modulo, other), guard, negated=not holds)
                return
    reached = (cst.Equal, cst.GreaterThanEqual) if holds else (cst.NotEqual, cst.LessThan)
    if isinstance(target.operator, reached):
        counter = dotted_name(left)
        if counter is not None and not is_number(right):
            yield AccumulationCheck("count", test, left, counter, 0, right, "count", guard, not holds)
        elif counter is not None and int_value(right) is not None and int_value(right) > 1:
            yield AccumulationCheck("count", test, left, counter, 0, right, "count", guard, not holds)


def _is_modulo(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo)


def is_number(node: Optional[cst.BaseExpression]) -> bool:
    return isinstance(node, (cst.Integer, cst.Float))


def _remainder_kind(modulo: cst.BinaryOperation, other: cst.BaseExpression) -> str:
    if int_value(other) == 0:
        return "zero"
    if (
        isinstance(other, cst.BinaryOperation)
        and isinstance(other.operator, cst.Subtract)
        and int_value(other.right) == 1
        and other.left.deep_equals(modulo.right)
    ):
        return "last"
    count = int_value(modulo.right)
    if count is not None and int_value(other) == count - 1:
        return "last"
    return "other"


def _modulo_check(expression: cst.BaseExpression, modulo: cst.BinaryOperation, remainder: str, guard: Guard,
                  negated: bool = False) -> AccumulationCheck:
    operand = modulo.left
    counter, offset = dotted_name(operand), 0
    if isinstance(operand, cst.BinaryOperation) and isinstance(operand.operator, cst.Add):
        for name_side, number_side in ((operand.left, operand.right), (operand.right, operand.left)):
            number = int_value(number_side)
            if dotted_name(name_side) is not None and number is not None:
                counter, offset = dotted_name(name_side), number
                break
        else:
            counter = None
    return AccumulationCheck("modulo", expression, operand, counter, offset, modulo.right, remainder, guard, negated)


def is_increment(assignment: Assignment) -> bool:
    if assignment.operator == "+=":
        return int_value(assignment.value) == 1
    value = assignment.value
    return (
        assignment.operator == "="
        and isinstance(value, cst.BinaryOperation)
        and isinstance(value.operator, cst.Add)
        and dotted_name(value.left) == assignment.target
        and int_value(value.right) == 1
    )


def unwrap(node: cst.BaseExpression) -> cst.BaseExpression:
    """`tqdm(enumerate(loader), total=n)` -> `enumerate(loader)`."""
    while isinstance(node, cst.Call):
        callee = dotted_name(node.func)
        if callee is None or last_component(callee) not in _PASS_THROUGH_WRAPPERS:
            return node
        inner = positional(node, 0)
        if inner is None:
            return node
        node = inner
    return node


def header_counter(loop: cst.For, names: ModuleNames,
                   earlier: Callable[[str], Optional[cst.BaseExpression]],
                   fresh: Optional[Callable[[str], Optional[cst.BaseExpression]]] = None) -> Optional[LoopCounter]:
    """The counter a `for` header defines: `i` of `enumerate(...)`, `range(...)`, `itertools.count()`. A start
    given by name (`range(start_iter, max_iter)`) is read through `fresh`: its value on a fresh run."""

    def start_of(node: Optional[cst.BaseExpression]) -> Optional[int]:
        value = int_value(node)
        if value is None and isinstance(node, cst.Name) and fresh is not None:
            value = int_value(fresh(node.value))
        return value

    counter = _header_counter(loop, names, earlier, start_of)
    if counter is None or counter.start is None or not isinstance(counter.origin, cst.Call):
        return counter
    first = positional(counter.origin, 1 if counter.source == "enumerate" else 0) or keyword(counter.origin, "start")
    if counter.source == "range" and positional(counter.origin, 1) is None:
        first = None
    if isinstance(first, cst.Name) and int_value(earlier(first.value)) is None:
        return dataclasses.replace(counter, resumed=True)
    return counter


def _header_counter(loop: cst.For, names: ModuleNames, earlier: Callable[[str], Optional[cst.BaseExpression]],
                    start_of: Callable[[Optional[cst.BaseExpression]], Optional[int]]) -> Optional[LoopCounter]:

    iterable = unwrap(loop.iter)
    if isinstance(iterable, cst.Name):
        # `pbar = tqdm(enumerate(loader), total=len(loader))` then `for i, batch in pbar:`.
        before = earlier(iterable.value)
        if isinstance(before, cst.IfExp):
            # `tqdm(enumerate(loader)) if rank == 0 else enumerate(loader)`: the same counter either way.
            body, orelse = unwrap(before.body), unwrap(before.orelse)
            before = body if body.deep_equals(orelse) else None
        if before is not None:
            iterable = unwrap(before)
    if not isinstance(iterable, cst.Call):
        return None
    callee = dotted_name(iterable.func) or ""
    qualified = names.callee(iterable) or callee
    short = last_component(callee)
    target = loop.target
    if short == "enumerate":
        if not isinstance(target, (cst.Tuple, cst.List)) or not target.elements:
            return None
        name = dotted_name(target.elements[0].value)
        start_node = positional(iterable, 1) or keyword(iterable, "start")
        start = 0 if start_node is None else start_of(start_node)
        counted = positional(iterable, 0)
        counted = unwrap(counted) if counted is not None else None
        endless = isinstance(counted, cst.Call) and names.callee(counted) in _ENDLESS_ITERATORS
        return LoopCounter(name, start, "enumerate", None, iterable, counted, endless) if name else None
    name = dotted_name(target)
    if name is None:
        return None
    if short == "range" and callee == "range":
        first = positional(iterable, 0)
        start = 0 if positional(iterable, 1) is None else start_of(first)
        return LoopCounter(name, start, "range", None, iterable, iterable)
    if qualified == "itertools.count" or callee == "count":
        first = positional(iterable, 0) or keyword(iterable, "start")
        return LoopCounter(name, 0 if first is None else start_of(first), "count", None, iterable)
    return None


def known_length(iterable: Optional[cst.BaseExpression], names: ModuleNames,
                 earlier: Callable[[str], Optional[cst.BaseExpression]]) -> Optional[int]:
    """How many micro-batches the counted iterable gives, when constants in the file settle it:
    `range(64)`, `range(8, 72)`, or a `DataLoader` over a dataset of known size
    (`TensorDataset(torch.randn(100, 4), ...)`) with a literal `batch_size` and `drop_last`."""
    node = _resolved(iterable, earlier)
    if not isinstance(node, cst.Call):
        return None
    callee = dotted_name(node.func)
    if callee == "range":
        bounds = [int_value(_resolved(arg.value, earlier)) for arg in node.args]
        if len(bounds) == 1 and bounds[0] is not None:
            return max(bounds[0], 0)
        if len(bounds) == 2 and None not in bounds:
            return max(bounds[1] - bounds[0], 0)
        return None
    if names.callee(node) not in _LOADERS:
        return None
    size = _dataset_size(positional(node, 0) or keyword(node, "dataset"), names, earlier)
    batch = int_value(_resolved(positional(node, 1) or keyword(node, "batch_size"), earlier))
    if keyword(node, "batch_size") is None and positional(node, 1) is None:
        batch = 1  # DataLoader's default
    drop_last = keyword(node, "drop_last")
    if size is None or batch is None or batch <= 0:
        return None
    if drop_last is None or (isinstance(drop_last, cst.Name) and drop_last.value == "False"):
        return -(-size // batch)
    if isinstance(drop_last, cst.Name) and drop_last.value == "True":
        return size // batch
    return None


_ITERABLE_DATASETS = frozenset({"torch.utils.data.IterableDataset", "torch.utils.data.dataset.IterableDataset",
                                "torch.utils.data.IterDataPipe", "webdataset.WebDataset", "wds.WebDataset"})
_UNSIZED_BUILTINS = frozenset({"iter", "map", "filter", "zip", "reversed", "enumerate"})
_SIZED_BUILTINS = frozenset({"range", "list", "tuple", "sorted", "dict", "set"})


def sized(iterable: Optional[cst.BaseExpression], names: ModuleNames,
          earlier: Callable[[str], Optional[cst.BaseExpression]]) -> Optional[bool]:
    """Whether `len(iterable)` works. Yes: a list or tuple (display, comprehension, `list(...)`), `range`, a
    `DataLoader` over a map-style dataset (`TensorDataset`, a class of this file with `__len__`). No: a
    generator (expression, or a function of this file that yields), `iter(...)`, `zip`/`map`/`itertools`
    iterators, a `DataLoader` over an `IterableDataset` (or a streamed Hugging Face dataset). Else unknown."""
    node = _resolved(iterable, earlier)
    if isinstance(node, (cst.List, cst.Tuple, cst.Set, cst.Dict, cst.ListComp, cst.SetComp, cst.DictComp)):
        return True
    if isinstance(node, cst.GeneratorExp):
        return False
    if not isinstance(node, cst.Call):
        return None
    callee = dotted_name(node.func) or ""
    qualified = names.callee(node) or callee
    if callee in _SIZED_BUILTINS:
        return True
    if callee in _UNSIZED_BUILTINS or qualified.startswith("itertools."):
        return False
    if qualified in _LOADERS:
        return _sized_dataset(_resolved(positional(node, 0) or keyword(node, "dataset"), earlier), names)
    generators = names.functions.get(callee, [])
    if len(generators) == 1 and _yields(generators[0]):
        return False
    return None


def _sized_dataset(node: Optional[cst.BaseExpression], names: ModuleNames) -> Optional[bool]:
    if not isinstance(node, cst.Call):
        return None
    qualified = names.callee(node) or dotted_name(node.func) or ""
    if qualified in _DATASETS:
        return True
    if qualified in _ITERABLE_DATASETS or (isinstance(node.func, cst.Attribute)
                                           and node.func.attr.value == "to_iterable_dataset"):
        return False
    if last_component(qualified) == "load_dataset" and is_true(keyword(node, "streaming")):
        return False
    classes = names.classes.get(dotted_name(node.func) or "", [])
    return _sized_class(classes[0], names, 0) if len(classes) == 1 else None


def _sized_class(class_def: cst.ClassDef, names: ModuleNames, depth: int) -> Optional[bool]:
    """A dataset class of this file: sized if it (or a base of this file) defines `__len__`; not if it derives
    from an `IterableDataset` without one."""
    methods = {statement.name.value for statement in class_def.body.body if isinstance(statement, cst.FunctionDef)} \
        if isinstance(class_def.body, cst.IndentedBlock) else set()
    if "__len__" in methods:
        return True
    for base in class_def.bases:
        qualified = names.qualify(base.value) or ""
        if qualified in _ITERABLE_DATASETS:
            return False
        local = names.classes.get(dotted_name(base.value) or "", [])
        if len(local) == 1 and local[0] is not class_def and depth < 3:
            found = _sized_class(local[0], names, depth + 1)
            if found is not None:
                return found
    return None


def _yields(function: cst.FunctionDef) -> bool:
    return any(isinstance(part, cst.Yield) for part in preorder(function.body))


def _dataset_size(node: Optional[cst.BaseExpression], names: ModuleNames,
                  earlier: Callable[[str], Optional[cst.BaseExpression]]) -> Optional[int]:
    """Rows of `TensorDataset(torch.randn(100, 4), labels)`: the first dimension of its first tensor."""
    node = _resolved(node, earlier)
    if not isinstance(node, cst.Call) or names.callee(node) not in _DATASETS:
        return None
    first = _resolved(positional(node, 0), earlier)
    if not isinstance(first, cst.Call):
        return None
    qualified = names.callee(first) or ""
    if not qualified.startswith("torch.") or last_component(qualified) not in (
            "randn", "rand", "zeros", "ones", "empty", "randint", "arange"):
        return None
    shape = positional(first, 2 if last_component(qualified) == "randint" else 0)
    if last_component(qualified) == "arange":
        shape = positional(first, 0) if positional(first, 1) is None else None
    if isinstance(shape, (cst.Tuple, cst.List)) and shape.elements:
        shape = shape.elements[0].value
    return int_value(_resolved(shape, earlier))


def _resolved(node: Optional[cst.BaseExpression], earlier: Callable[[str], Optional[cst.BaseExpression]],
              depth: int = 0) -> Optional[cst.BaseExpression]:
    """A name replaced by the value it had before the loop (a few steps deep)."""
    while isinstance(node, cst.Name) and depth < 4:
        value = earlier(node.value)
        if value is None:
            return node
        node, depth = value, depth + 1
    return node


# --- windows written as inner loops -------------------------------------------------------------


@dataclass(frozen=True)
class InnerCount:
    """How many micro-batches one run of a loop that is a window by itself goes through.

    `kind` is `counted` (`for _ in range(grad_accum)`: `count` is `grad_accum`), `slices` (`for s in
    range(0, len(batch), size)` reading `batch[s:...]`: ceil(len(batch) / size) slices, the last one maybe
    shorter) or `chunks` (`batch.chunk(count)`: at most `count` chunks; `batch.split(size)`)."""

    kind: str
    count: Optional[cst.BaseExpression] = None
    batch: Optional[cst.BaseExpression] = None
    size: Optional[cst.BaseExpression] = None
    value: Optional[int] = None  # the number `count` stands for, when the code gives it (`grad_accum = 4`)

    def describe(self, code: Callable[[cst.CSTNode], str], known: bool = False) -> str:
        """How a message says the count: `` `grad_accum` ``, `` `ceil(len(x) / micro_bs)` ``; with `known`, also
        the number a name stands for: `` `grad_accum` (= 4) ``."""
        if self.count is None:
            return f"`ceil(len({code(self.batch)}) / {code(self.size)})`"
        spelled = f"`{code(self.count)}`"
        if known and self.value is not None and not isinstance(self.count, cst.Integer):
            spelled += f" (= {self.value})"
        return spelled

    @property
    def exact(self) -> bool:
        """Every run of the loop goes through `count` micro-batches: a counted loop. (Slices and chunks
        of a batch whose length the code does not give may be fewer, or of unequal sizes.)"""
        return self.kind == "counted"


@dataclass(frozen=True)
class InnerWindow:
    """A loop that is an accumulation window by itself: every iteration backpropagates one micro-batch
    (nothing in it steps the optimizer), and the optimizer steps once, in the statements after the loop.

    `steps` are that step and the ones standing for it on other branches (`if scaler is not None:
    scaler.step(optimizer)` / `else: optimizer.step()`), the first one first; `step_alone` when there is
    only one, a statement of the loop's own block (a line may be moved next to it). `between` are the
    statements of that block from the loop to the step. `rescaled` when something between the loop and
    the step rescales the gradients in place (`p.grad.div_(n)`, a helper that scales them)."""

    count: InnerCount
    steps: Tuple[StepSite, ...]
    models: frozenset  # the modules whose parameters the stepped optimizer holds
    between: Tuple[cst.CSTNode, ...] = ()
    step_alone: bool = False
    rescaled: bool = False

    @property
    def step(self) -> StepSite:
        return self.steps[0]

    @property
    def optimizer(self) -> str:
        return self.steps[0].receiver


def inner_count(loop: cst.For, names: ModuleNames,
                earlier: Callable[[str], Optional[cst.BaseExpression]]) -> Optional[InnerCount]:
    """How many micro-batches a loop goes through when its header says it and its body uses each iteration
    only as one micro-batch: `for _ in range(n)` whose target the body reads only to compare it (`micro ==
    n - 1`, deciding something for the last one) or to cut a slice (`x[micro * m:(micro + 1) * m]`); a
    loop over the slices or chunks of one batch (also through a name bound to them before the loop:
    `chunks = list(zip(x.split(m), y.split(m)))`). None for a loop whose iterations differ otherwise (`for
    head in heads`, `for t in range(n_tasks): heads[t](...)`): it computes the parts of one loss."""
    iterable = loop.iter
    if isinstance(iterable, cst.Name):
        iterable = _resolved(iterable, earlier)
    while isinstance(iterable, cst.Call) and dotted_name(iterable.func) in ("list", "tuple") \
            and len(iterable.args) == 1:
        iterable = iterable.args[0].value
    if isinstance(iterable, cst.Call) and dotted_name(iterable.func) == "range":
        arguments = [arg.value for arg in iterable.args if arg.keyword is None]
        if len(arguments) == 3:
            return _slices(loop, arguments)
        target = dotted_name(loop.target) if isinstance(loop.target, cst.Name) else None
        if target is None or len(arguments) not in (1, 2) or len(arguments) != len(iterable.args):
            return None
        count = _range_length(arguments)
        if count is None or not _only_counts(loop.body, target):
            return None
        return InnerCount("counted", count)
    return _chunks(iterable, names)


def _range_length(arguments: List[cst.BaseExpression]) -> Optional[cst.BaseExpression]:
    """`n` for `range(n)`, `range(0, n)` and `range(1, n + 1)`; a number for `range(2, 6)`."""
    if len(arguments) == 1:
        return arguments[0]
    start, stop = arguments
    first, last = int_value(start), int_value(stop)
    if first == 0:
        return stop
    if first is not None and last is not None:
        return cst.Integer(str(max(last - first, 0)))
    if first is not None and isinstance(stop, cst.BinaryOperation) and isinstance(stop.operator, cst.Add) \
            and int_value(stop.right) == first:
        return stop.left
    return None


def _only_counts(body: cst.CSTNode, target: str) -> bool:
    """Every read of `target` in `body` compares it (`micro == n - 1`) or bounds a slice (`x[micro * m:]`).
    A name bound there (`_` in `obs, reward, done, _ = env.step(a)`) is not a read."""
    ok = True

    def visit(node: cst.CSTNode, allowed: bool) -> None:
        nonlocal ok
        if not ok or isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return
        if isinstance(node, cst.Attribute):
            visit(node.value, allowed)
            return
        if isinstance(node, (cst.AssignTarget, cst.AsName)) or (isinstance(node, (cst.For, cst.CompFor))):
            bound = node.target if not isinstance(node, cst.AsName) else node.name
            for child in children(node):
                if child is not bound or not _binds_names(child):
                    visit(child, allowed)
            return
        if isinstance(node, cst.Name) and node.value == target and not allowed:
            ok = False
            return
        if isinstance(node, (cst.Comparison, cst.Slice)):
            allowed = True
        for child in children(node):
            visit(child, allowed)

    visit(body, False)
    return ok


def _binds_names(target: cst.CSTNode) -> bool:
    """`a`, `a, (b, c)`, `*rest`: a target made of names only (no subscript or attribute, which read)."""
    if isinstance(target, cst.Name):
        return True
    if isinstance(target, (cst.Tuple, cst.List)):
        return all(_binds_names(element.value) for element in target.elements)
    if isinstance(target, cst.StarredElement):
        return _binds_names(target.value)
    return False


def _slices(loop: cst.For, arguments: List[cst.BaseExpression]) -> Optional[InnerCount]:
    """`for s in range(0, len(x), m)` reading `x[s:...]`."""
    first, stop, size = arguments
    target = dotted_name(loop.target)
    if int_value(first) != 0 or target is None or not isinstance(stop, cst.Call) \
            or dotted_name(stop.func) != "len" or len(stop.args) != 1:
        return None
    batch = stop.args[0].value
    sliced = any(isinstance(part, cst.Subscript) and part.value.deep_equals(batch)
                 and any(isinstance(element.slice, cst.Slice) and _mentions(element.slice, target)
                         for element in part.slice)
                 for part in preorder(loop.body))
    return InnerCount("slices", batch=batch, size=size) if sliced else None


def _chunks(iterable: cst.BaseExpression, names: ModuleNames) -> Optional[InnerCount]:
    """`x.chunk(k)`, `x.split(m)`, `torch.chunk(x, k)`, also zipped with the targets' (`zip(x.chunk(k),
    y.chunk(k))`: the first names the batch)."""
    if isinstance(iterable, cst.Call) and dotted_name(iterable.func) == "zip":
        if not iterable.args:
            return None
        iterable = iterable.args[0].value
    if not isinstance(iterable, cst.Call):
        return None
    qualified = names.callee(iterable) or ""
    arguments = [arg.value for arg in iterable.args]
    if qualified in ("torch.chunk", "torch.split"):
        method, tensor, amount = qualified[len("torch."):], arguments[0] if arguments else None, arguments[1:2]
    elif isinstance(iterable.func, cst.Attribute) and iterable.func.attr.value in ("chunk", "split") \
            and not qualified.startswith("torch."):
        method, tensor, amount = iterable.func.attr.value, iterable.func.value, arguments[:1]
    else:
        return None
    if tensor is None or not amount or isinstance(amount[0], (cst.List, cst.Tuple)):
        return None
    if method == "chunk":
        return InnerCount("chunks", count=amount[0], batch=tensor)
    return InnerCount("chunks", batch=tensor, size=amount[0])


def _mentions(node: cst.CSTNode, name: str) -> bool:
    return any(isinstance(part, cst.Name) and part.value == name for part in preorder(node))


def returned_condition(function: cst.FunctionDef) -> Optional[cst.BaseExpression]:
    """What a predicate returns, as one expression: `if interval <= 0: return False` / `if last: return True` /
    `return (self.idx + 1) % interval == 0` is `not interval <= 0 and (last or (self.idx + 1) % interval == 0)`.
    Only a body of `if`s that return and a final `return` (a docstring aside); None otherwise."""
    return _returned(list(block_of(function)))


def _returned(statements: List[cst.CSTNode]) -> Optional[cst.BaseExpression]:
    while statements and isinstance(statements[0], cst.SimpleStatementLine) and len(statements[0].body) == 1 \
            and isinstance(statements[0].body[0], cst.Expr) and isinstance(statements[0].body[0].value,
                                                                           (cst.SimpleString, cst.ConcatenatedString)):
        statements = statements[1:]
    if not statements:
        return None
    first, rest = statements[0], statements[1:]
    if isinstance(first, cst.SimpleStatementLine) and len(first.body) == 1 and isinstance(first.body[0], cst.Return):
        return first.body[0].value
    if not isinstance(first, cst.If):
        return None
    body = _returned(list(block_of(first)))
    orelse = first.orelse
    other = _returned(rest) if orelse is None else (
        _returned([orelse]) if isinstance(orelse, cst.If) else _returned(list(block_of(orelse))))
    if body is None or other is None:
        return None
    if dotted_name(body) == "True":
        return cst.BooleanOperation(first.test, cst.Or(), other)
    if dotted_name(body) == "False":
        return cst.BooleanOperation(cst.UnaryOperation(cst.Not(), first.test), cst.And(), other)
    return cst.BooleanOperation(cst.BooleanOperation(first.test, cst.And(), body), cst.Or(), other)


class _Substitute(cst.CSTTransformer):
    def __init__(self, values: Dict[str, cst.BaseExpression]) -> None:
        self.values = values

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self.values.get(original.value, updated)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        return updated.with_changes(attr=original.attr)  # `self.idx`: only the value is a name to replace

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)


def substituted(expression: cst.BaseExpression, values: Dict[str, cst.BaseExpression]) -> cst.BaseExpression:
    """`expression` with names replaced: `(self.idx + 1) % interval == 0` -> `(batch_idx.idx + 1) % N == 0`."""
    return expression.visit(_Substitute(values))
