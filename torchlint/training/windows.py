"""Accumulation windows: the counters that number micro-batches and the conditions that step once a window.

A counter is the `i` of `enumerate(loader)`, of `range(...)`, of
`itertools.count()`, or a name incremented by one on every iteration
(`micro += 1`). A window condition lets the step through once every N
micro-batches: `(i + 1) % N == 0`, `i % N == N - 1`, `not i % N`,
`micro == N`; or, negated, `if i % N != 0: continue`. The condition may be
held in a name assigned in the iteration (`is_accumulating = i % N != 0`
... `if not is_accumulating:`). A window may also be counted since the last
step (`since`): `ni - last_opt_step >= accumulate` (also `> N - 1`,
`last_opt_step + accumulate <= ni`, the difference held in a name), where the
step's branch sets `last_opt_step = ni`; `training.loop` checks that.

A window condition is the step's window only when the step runs on every
boundary it gives: a further condition of the step's (`conjuncts` of an `and`,
an `if` nested in the window's) that may fail there (`if glb_step % log_every
== 0:`, `if ready:`) leaves the window unknown; `training.loop` reads which
hold (`if optimizer is not None:`, `and i > 0`) and which window of two on one
counter is a `multiple_of` the other (`i % (2 * n) == 0` in `i % n == 0`).

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
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Tuple

import libcst as cst

from torchlint.flow.cfg import block_of
from torchlint.names import ModuleNames, dotted_name, int_value, is_true, keyword, last_component, positional
from torchlint.training.calls import parameter_names
from torchlint.training.frameworks import IgniteRun
from torchlint.training.sites import Assignment, Guard, StepSite
from torchlint.walk import children, preorder

# Wrappers around an iterable that keep its elements and their order. `tqdm` in any case: Ultralytics' `TQDM`
# is a progress bar of the same kind.
_PASS_THROUGH_WRAPPERS = frozenset({"tqdm", "trange", "track", "progress", "progress_bar", "master_bar", "iter", "list",
                                    "islice"})
_ENDLESS_ITERATORS = frozenset({"itertools.cycle", "itertools.repeat", "itertools.count"})
_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
_DATASETS = frozenset({"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"})


@dataclass(frozen=True)
class LoopCounter:
    """A name that counts micro-batches, and its value on the first one."""

    name: str
    start: Optional[int]  # None when the start cannot be read from the code
    source: str  # enumerate | range | count | manual | framework | walk (`windows.walk_counter`)
    increment: Optional[Assignment] = None  # the `name += 1` of a manual counter
    origin: Optional[cst.CSTNode] = None  # what to quote: `enumerate(loader)`
    iterable: Optional[cst.BaseExpression] = None  # `loader` in `enumerate(tqdm(loader))`
    endless: bool = False  # `enumerate(itertools.cycle(loader))`: there is no last micro-batch
    resumed: bool = False  # `start` is the fresh run's: a resume restores the count (`step = ckpt["step"]`)
    # An attribute counter of a method that is a loop's body (`self.n_iter`), set back to its start by a method
    # the calling loop's function calls right after that loop (`learner.end_epoch()`) with no step between:
    # its windows start again in each epoch, as an `enumerate` counter's do.
    restarted_after: Optional[cst.CSTNode] = None  # that call's statement
    # A manual counter set to its start before every run of a `for` loop and advanced by one on every
    # iteration (`nb_tr_steps = 0` before the loop, `nb_tr_steps += 1` in it, nothing else setting it):
    # it numbers the micro-batches of each run as an `enumerate` counter does; `iterable` is what the loop walks.
    paced: bool = False
    # A framework's count of the whole run's iterations (Ignite's `engine.state.iteration`, from 1, not started
    # again in a new epoch): the run that numbers them, how long it is and what may step after its last one.
    run: Optional["IgniteRun"] = None


@dataclass(frozen=True)
class AccumulationCheck:
    """A condition that lets the step through once per accumulation window.

    `kind` is `modulo` (`i % N == 0`, `(i + 1) % N == 0`, `i % N == N - 1`,
    `not i % N`), `count` (`micro == N`, `micro >= N`) or `since` (`ni -
    last_opt_step >= N`: `stamp` is `ni`, `since` is `last_opt_step`, and
    `counter` the loop's counter `ni` advances with). `negated` when the
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
    since: Optional[str] = None  # `last_opt_step` of `ni - last_opt_step >= N`: the counter at the last step
    stamp: Optional[str] = None  # `ni` of `ni - last_opt_step >= N`
    # The call of a method of the file the condition is read through (`batch_idx.is_interval(N)`, returning
    # `(self.idx + 1) % interval == 0`): `expression` is that call; what counts the micro-batches is the
    # object's state, whose value on the first one is not read (`counter` is None).
    through: Optional[cst.Call] = None
    # A further condition on a counter of this check's windows (`glb_step % f == 0` where `glb_step += 1` runs
    # each time this check holds): the window is `count` = `n * f` micro-batches (`product_window`).
    counted_by: Optional["AccumulationCheck"] = None

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
# A value read in the iteration -> the count N it cycles modulo (`idx = i % N`, a generator's
# `{"grad_accum_index": c % N}`), spelled as the loop's code spells it, when the code shows it.
Cycler = Callable[[cst.BaseExpression], Optional[cst.BaseExpression]]


def checks_in(test: cst.BaseExpression, guard: Guard, holds: bool = True,
              resolve: Optional[Resolver] = None, cycle: Optional[Cycler] = None,
              expand: Optional[Callable[[cst.Call], Optional[cst.BaseExpression]]] = None
              ) -> Iterable[AccumulationCheck]:
    """Window conditions in `test`; `holds` is False when the step runs where `test` is false. `resolve`
    reads a flag (`if not is_accumulating:`) as the condition assigned to it (once, not through flags).
    `cycle` reads a value that cycles modulo N, so `x == N - 1`, `x + 1 == N` and `x == 0` are windows too
    (with no counter of the loop's own: the count lives where `x` was computed); `expand` a call of a method
    of the file as the condition it returns, in the caller's terms."""
    if isinstance(test, cst.BooleanOperation):
        yield from checks_in(test.left, guard, holds, resolve, cycle, expand)
        yield from checks_in(test.right, guard, holds, resolve, cycle, expand)
        return
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        if _is_modulo(test.expression) and holds:
            yield _modulo_check(test, test.expression, "zero", guard)
        else:
            yield from checks_in(test.expression, guard, not holds, resolve, cycle, expand)
        return
    if isinstance(test, cst.Name) and resolve is not None:
        held = resolve(test.value)
        if held is not None:
            for check in checks_in(held[0], guard, holds, cycle=cycle, expand=expand):
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
        if cycle is not None:
            for value, other in ((left, right), (right, left)):
                found = _cycled_check(test, value, other, cycle, guard, not holds)
                if found is not None:
                    yield found
                    return
    yield from _since_checks(test, guard, holds, resolve)
    reached = (cst.Equal, cst.GreaterThanEqual) if holds else (cst.NotEqual, cst.LessThan)
    if isinstance(target.operator, reached):
        counter = dotted_name(left)
        if counter is not None and not is_number(right):
            yield AccumulationCheck("count", test, left, counter, 0, right, "count", guard, not holds)
        elif counter is not None and int_value(right) is not None and int_value(right) > 1:
            yield AccumulationCheck("count", test, left, counter, 0, right, "count", guard, not holds)


def conjuncts(test: cst.BaseExpression, holds: bool = True) -> List[Tuple[cst.BaseExpression, bool]]:
    """The conditions that must all hold (each as `(expression, holds)`) for a branch on `test` to run:
    both sides of `a and b`, of `not (a or b)` and, where the branch runs when `test` is false (`holds` is
    False), of `a or b`; `test` itself otherwise."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And if holds else cst.Or):
        return conjuncts(test.left, holds) + conjuncts(test.right, holds)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = conjuncts(test.expression, not holds)
        if len(inner) > 1:
            return inner
    return [(test, holds)]


def multiple_of(wide: AccumulationCheck, narrow: AccumulationCheck, value: Callable[[cst.BaseExpression], Optional[int]]
                ) -> bool:
    """Every micro-batch `wide` lets through `narrow` lets through too, and `wide` comes round every k-th of
    `narrow`'s windows: the same counter, offset and remainder, with a count the code shows is a multiple of
    the other's (`i % (2 * n) == 0` within `i % n == 0`)."""
    if wide.kind != "modulo" or narrow.kind != "modulo" or wide.counter is None or wide.counter != narrow.counter:
        return False
    if wide.offset != narrow.offset or wide.remainder != narrow.remainder or wide.remainder not in ("zero", "last"):
        return False
    count = wide.count
    if isinstance(count, cst.BinaryOperation) and isinstance(count.operator, cst.Multiply) and (
            count.left.deep_equals(narrow.count) or count.right.deep_equals(narrow.count)):
        return True
    big, small = value(wide.count), value(narrow.count)
    return big is not None and small is not None and small > 0 and big % small == 0


# `a >= b` read from either side, and its negation: the operator that says "left is at least right".
_AT_LEAST = {cst.GreaterThanEqual: (False, 0), cst.GreaterThan: (False, 1),
             cst.LessThanEqual: (True, 0), cst.LessThan: (True, 1)}
_NEGATION = {cst.GreaterThanEqual: cst.LessThan, cst.GreaterThan: cst.LessThanEqual,
             cst.LessThanEqual: cst.GreaterThan, cst.LessThan: cst.GreaterThanEqual}


def _since_checks(test: cst.Comparison, guard: Guard, holds: bool,
                  resolve: Optional[Resolver]) -> Iterator[AccumulationCheck]:
    """`ni - last >= N` (`> N - 1`, `N <= ni - last`, `ni >= last + N`, `last + N <= ni`, `gap >= N` with
    `gap = ni - last`; negated: `ni - last < N`) as windows counted since the last step. Which of two names
    in `last + N` is the last step's is left to `training.loop`, which knows what the step's branch sets:
    each reading is yielded."""
    operator = type(test.comparisons[0].operator)
    if not holds:
        operator = _NEGATION.get(operator)
    if operator not in _AT_LEAST:
        return
    swapped, strict = _AT_LEAST[operator]
    larger, smaller = test.left, test.comparisons[0].comparator
    if swapped:
        larger, smaller = smaller, larger
    held_at = -1
    if isinstance(larger, cst.Name) and resolve is not None:
        held = resolve(larger.value)  # `gap = ni - last_opt_step` ... `if gap >= accumulate:`
        if held is not None and _difference(held[0]) is not None:
            larger, held_at = held[0], held[1]
    pairs: List[Tuple[str, str, cst.BaseExpression]] = []
    difference = _difference(larger)
    if difference is not None and not _reads_any(smaller, difference):
        pairs.append((*difference, smaller))
    stamp = dotted_name(larger)
    if stamp is not None and isinstance(smaller, cst.BinaryOperation) and isinstance(smaller.operator, cst.Add):
        for last, count in ((smaller.left, smaller.right), (smaller.right, smaller.left)):
            name = dotted_name(last)
            if name is not None and name != stamp and not _reads_any(count, (stamp, name)):
                pairs.append((stamp, name, count))
    for stamp, last, count in pairs:
        if strict:  # `> accum - 1` is `>= accum`
            value = int_value(count)
            if value is not None:
                count = cst.Integer(str(value + 1))
            elif isinstance(count, cst.BinaryOperation) and isinstance(count.operator, cst.Subtract) \
                    and int_value(count.right) == 1:
                count = count.left
            else:
                count = cst.BinaryOperation(count, cst.Add(), cst.Integer("1"))
        if int_value(count) is not None and int_value(count) <= 1:
            continue  # a step on every micro-batch
        yield AccumulationCheck("since", test, larger, stamp, 0, count, "count", guard, not holds, held_at=held_at,
                                since=last, stamp=stamp)


def _difference(node: cst.BaseExpression) -> Optional[Tuple[str, str]]:
    """`ni - last_opt_step` -> (`ni`, `last_opt_step`)."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Subtract):
        left, right = dotted_name(node.left), dotted_name(node.right)
        if left is not None and right is not None and left != right:
            return left, right
    return None


def _reads_any(node: cst.BaseExpression, names: Iterable[str]) -> bool:
    wanted = set(names)
    return any(dotted_name(part) in wanted for part in preorder(node)
               if isinstance(part, (cst.Name, cst.Attribute)))


def _cycled_check(test: cst.Comparison, value: cst.BaseExpression, other: cst.BaseExpression, cycle: Cycler,
                  guard: Guard, negated: bool) -> Optional[AccumulationCheck]:
    """`x == N - 1`, `x + 1 == N` (the window's last micro-batch) or `x == 0` (its first) for an `x` that
    cycles modulo N. The count is the comparison's own `N` where it has one."""
    shifted = isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add) \
        and int_value(value.right) == 1
    count = cycle(value.left if shifted else value)
    if count is None:
        return None
    if shifted:
        if not (other.deep_equals(count) or (int_value(count) is not None and int_value(other) == int_value(count))):
            return None
        return AccumulationCheck("modulo", test, value, None, 0, other, "last", guard, negated)
    if int_value(other) == 0:
        return AccumulationCheck("modulo", test, value, None, 0, count, "zero", guard, negated)
    if isinstance(other, cst.BinaryOperation) and isinstance(other.operator, cst.Subtract) \
            and int_value(other.right) == 1 and other.left.deep_equals(count):
        return AccumulationCheck("modulo", test, value, None, 0, other.left, "last", guard, negated)
    if int_value(count) is not None and int_value(other) == int_value(count) - 1:
        return AccumulationCheck("modulo", test, value, None, 0, count, "last", guard, negated)
    return None


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


def _passes_through(callee: str) -> bool:
    return callee in _PASS_THROUGH_WRAPPERS or callee.lower() == "tqdm"


def unwrap(node: cst.BaseExpression, names: Optional[ModuleNames] = None) -> cst.BaseExpression:
    """`tqdm(enumerate(loader), total=n)` -> `enumerate(loader)`; with the file's `names`, also a generator of the
    project that hands on each element of what it is given (`metric_logger.log_every(range(n), 10)`)."""
    while isinstance(node, cst.Call):
        callee = dotted_name(node.func)
        if callee is None or not (_passes_through(last_component(callee))
                                  or (names is not None and _project_pass_through(node, names))):
            return node
        inner = positional(node, 0)
        if inner is None:
            return node
        node = inner
    return node


def _project_pass_through(call: cst.Call, names: ModuleNames) -> bool:
    """`call` runs a generator of this file or of another file of the project that yields each element of its
    first argument, once and in order, whatever else it does around them (`MetricLogger.log_every`: `for obj in
    iterable: ... yield obj ...`, timing and printing): the method of the one class the receiver is built from,
    or a function. Unknown (False) otherwise."""
    func = call.func
    if isinstance(func, cst.Attribute):
        receiver = dotted_name(func.value)
        values = names.values_of(receiver) if receiver is not None else []
        classes = {dotted_name(value.func) for value in values if isinstance(value, cst.Call)}
        if not values or len(classes) != 1 or None in classes or len(values) != sum(
                isinstance(value, cst.Call) for value in values):
            return False
        class_def = _class_definition(classes.pop(), names)
        if class_def is None:
            return False
        methods = [statement for statement in class_def.body.body
                   if isinstance(statement, cst.FunctionDef) and statement.name.value == func.attr.value]
        return len(methods) == 1 and _hands_on_each(methods[0], 1)
    name = dotted_name(func)
    if name is None or "." in name:
        return False
    local = names.functions.get(name, [])
    if local:
        return len(local) == 1 and _hands_on_each(local[0], 0)
    found = names.project.read_definition(names.imported(name)) \
        if names.project is not None and names.imported(name) is not None else None
    return found is not None and isinstance(found[1], cst.FunctionDef) and _hands_on_each(found[1], 0)


def _class_definition(name: str, names: ModuleNames) -> Optional[cst.ClassDef]:
    """The class `name` of this file, or the one an import of the project leads to."""
    if "." not in name and names.classes.get(name):
        local = names.classes[name]
        return local[0] if len(local) == 1 else None
    target = names.imported(name)
    found = names.project.read_definition(target) if names.project is not None and target is not None else None
    return found[1] if found is not None and isinstance(found[1], cst.ClassDef) else None


def _hands_on_each(function: cst.FunctionDef, position: int) -> bool:
    """A generator whose one `yield` hands on the target of a `for` over its parameter at `position` (1 past
    `self`), from that loop's own body, with no `break`, `continue` or `return` in the loop: each element, once,
    in order."""
    parameters = [parameter.name.value for parameter in function.params.params]
    if len(parameters) <= position:
        return False
    walked = parameters[position]
    yields = [node for node in preorder(function.body) if isinstance(node, (cst.Yield, cst.FunctionDef, cst.Lambda))]
    if len(yields) != 1 or not isinstance(yields[0], cst.Yield):
        return False  # no yield, several, or a nested function that may yield
    handed = yields[0]
    for statement in function.body.body:
        if isinstance(statement, cst.For) and dotted_name(statement.iter) == walked \
                and isinstance(statement.target, cst.Name) and statement.orelse is None:
            body = statement.body.body
            direct = any(isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1
                         and isinstance(line.body[0], cst.Expr) and line.body[0].value is handed
                         for line in body)
            stops = any(isinstance(node, (cst.Break, cst.Continue, cst.Return)) for node in preorder(statement.body))
            return direct and not stops and isinstance(handed.value, cst.Name) \
                and handed.value.value == statement.target.value
    return False


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

    iterable = unwrap(loop.iter, names)
    if isinstance(iterable, cst.Name):
        # `pbar = tqdm(enumerate(loader), total=len(loader))` then `for i, batch in pbar:`.
        before = earlier(iterable.value)
        if isinstance(before, cst.IfExp):
            # `tqdm(enumerate(loader)) if rank == 0 else enumerate(loader)`: the same counter either way.
            body, orelse = unwrap(before.body, names), unwrap(before.orelse, names)
            before = body if body.deep_equals(orelse) else None
        if before is not None:
            iterable = unwrap(before, names)
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
        counted = unwrap(counted, names) if counted is not None else None
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


def walked_iterable(loop: cst.For, names: ModuleNames, earlier: Callable[[str], Optional[cst.BaseExpression]]
                    ) -> Tuple[Optional[cst.BaseExpression], bool]:
    """What a `for` loop walks, progress bars and `enumerate` aside (`loader` of `for b in tqdm(loader):`, also
    through `pbar = tqdm(loader)` before the loop), and whether it never ends (`itertools.cycle(loader)`)."""
    iterable = unwrap(loop.iter, names)
    if isinstance(iterable, cst.Name):
        before = earlier(iterable.value)
        if before is not None:
            iterable = unwrap(before, names)
    if isinstance(iterable, cst.Call) and last_component(dotted_name(iterable.func) or "") == "enumerate":
        inner = positional(iterable, 0)
        iterable = unwrap(inner, names) if inner is not None else iterable
    endless = isinstance(iterable, cst.Call) and names.callee(iterable) in _ENDLESS_ITERATORS
    return iterable, endless


def product_window(outer: AccumulationCheck, inner: AccumulationCheck) -> AccumulationCheck:
    """`outer` (`actual_step % n == 0`) with the window that `inner` (`glb_step % f == 0`, `glb_step` numbering
    `outer`'s windows) makes of it: `n * f` micro-batches."""
    count = cst.BinaryOperation(left=_grouped_factor(outer.count), operator=cst.Multiply(),
                                right=_grouped_factor(inner.count))
    return dataclasses.replace(outer, count=count, counted_by=inner)


def _grouped_factor(node: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(node, (cst.BinaryOperation, cst.BooleanOperation, cst.IfExp)) and not node.lpar:
        return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return node


def walk_counter(loop: cst.For, names: ModuleNames, earlier: Callable[[str], Optional[cst.BaseExpression]]
                 ) -> LoopCounter:
    """The micro-batches of a `for` loop with no counter of its own (`for x, y in loader:`), as a counter with no
    name: what it walks tells where the loop ends, for windows counted by something else (`micro == N`)."""
    iterable, endless = walked_iterable(loop, names, earlier)
    return LoopCounter("", None, "walk", None, None, iterable, endless)


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


# --- window indices a generator of the file computes --------------------------------------------


def cycled_entry(generator: cst.FunctionDef, position: Optional[int], width: int,
                 key: Optional[str]) -> Optional[str]:
    """The parameter `P` of `generator` when every value it yields carries, under `key`, the index of a
    micro-batch in its window: `{"grad_accum_index": c % P, ...}` where `c` goes up by one on every
    iteration of the loop that yields once per iteration. `position` is where the dict sits in the yielded
    tuple of `width` elements (None: the yielded value is the dict); with no `key`, that element is the index
    itself (`yield c % P, batch`). None unless the file shows every path:
    one `yield` (no `yield from`), a dict display (or a name given one dict display in that loop, nowhere
    else touched) with that key once and no `**`, `P` a parameter the function never rebinds, and a counter
    that the loop moves by one, once per iteration, with no `continue` skipping it. The yield may sit under
    a threshold on the counter (`if c >= start: yield ...`): the yields still see consecutive counts."""
    body = [part for part in _own_nodes(generator.body)]
    yields = [part for part in body if isinstance(part, cst.Yield)]
    if len(yields) != 1 or not isinstance(yields[0].value, cst.BaseExpression) \
            or isinstance(yields[0].value, cst.From):
        return None
    yielded = yields[0].value
    if position is not None:
        if not isinstance(yielded, cst.Tuple) or len(yielded.elements) != width \
                or any(isinstance(element, cst.StarredElement) for element in yielded.elements):
            return None
        yielded = yielded.elements[position].value
    statement, loop = _statement_in_loop(generator, yields[0])
    if loop is None:
        return None
    if isinstance(yielded, cst.Name):
        mentions = [part for part in body if isinstance(part, cst.Name) and part.value == yielded.value]
        assigned = [part for part in _block(loop) if isinstance(part, cst.SimpleStatementLine)
                    and len(part.body) == 1 and isinstance(part.body[0], cst.Assign)
                    and len(part.body[0].targets) == 1
                    and any(part.body[0].targets[0].target is mention for mention in mentions)]
        if len(assigned) != 1 or len(mentions) != 2 or _block(loop).index(assigned[0]) >= _block(loop).index(statement):
            return None
        yielded = assigned[0].body[0].value
    if key is None:
        entries = [yielded]
    elif isinstance(yielded, cst.Dict) and all(isinstance(e, cst.DictElement) for e in yielded.elements):
        entries = [e.value for e in yielded.elements
                   if isinstance(e.key, cst.SimpleString) and e.key.evaluated_value == key]
    else:
        return None
    if len(entries) != 1 or not _is_modulo(entries[0]):
        return None
    counter, divisor = entries[0].left, entries[0].right
    if not isinstance(counter, cst.Name) or not isinstance(divisor, cst.Name):
        return None
    parameters = parameter_names(generator)
    if divisor.value not in parameters or _bound(body, divisor.value):
        return None
    if not _counts_each_iteration(loop, counter.value, statement):
        return None
    return divisor.value


def returned_remainder(function: cst.FunctionDef) -> Optional[str]:
    """The parameter `P` when `function` returns `x % P` and nothing else (one `return`, no `yield`, `P`
    never rebound): what a call of it returns cycles modulo the argument passed for `P`."""
    body = list(_own_nodes(function.body))
    returns = [part for part in body if isinstance(part, cst.Return)]
    if len(returns) != 1 or any(isinstance(part, cst.Yield) for part in body) or not _is_modulo(returns[0].value):
        return None
    divisor = returns[0].value.right
    parameters = parameter_names(function)
    if not isinstance(divisor, cst.Name) or divisor.value not in parameters or _bound(body, divisor.value):
        return None
    return divisor.value


def _own_nodes(node: cst.CSTNode) -> Iterable[cst.CSTNode]:
    """The nodes of a function's body, not those of functions, lambdas or classes defined in it."""
    for child in children(node):
        if isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        yield child
        yield from _own_nodes(child)


def _block(loop: cst.CSTNode) -> List[cst.BaseStatement]:
    body = loop.body
    return list(body.body) if isinstance(body, cst.IndentedBlock) else []


def _statement_in_loop(generator: cst.FunctionDef, target: cst.CSTNode
                       ) -> Tuple[Optional[cst.BaseStatement], Optional[cst.CSTNode]]:
    """The statement of the innermost loop's own block that holds `target`, and that loop."""
    found: Tuple[Optional[cst.BaseStatement], Optional[cst.CSTNode]] = (None, None)

    def visit(node: cst.CSTNode, loop: Optional[cst.CSTNode], statement: Optional[cst.BaseStatement]) -> bool:
        nonlocal found
        if node is target:
            found = (statement, loop)
            return True
        for child in children(node):
            if isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(node, (cst.For, cst.While)) and child is node.body:
                if any(visit(inner, node, inner) for inner in _block(node)):
                    return True
                continue
            if visit(child, loop, statement):
                return True
        return False

    visit(generator.body, None, None)
    return found


def _bound(nodes: List[cst.CSTNode], name: str) -> bool:
    """`name` is assigned, augmented, a loop or `with` target, or deleted among `nodes`."""
    for part in nodes:
        targets: List[cst.CSTNode] = []
        if isinstance(part, cst.Assign):
            targets = [target.target for target in part.targets]
        elif isinstance(part, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)):
            targets = [part.target]
        elif isinstance(part, cst.AsName):
            targets = [part.name]
        elif isinstance(part, (cst.Del, cst.NamedExpr)):
            targets = [part.target]
        if any(isinstance(inner, cst.Name) and inner.value == name
               for target in targets for inner in (target, *preorder(target))):
            return True
    return False


def _counts_each_iteration(loop: cst.CSTNode, counter: str, statement: cst.BaseStatement) -> bool:
    """`counter += 1` is a statement of `loop`'s own block and the only binding of `counter` in the loop, no
    `continue` of the loop skips it, and `statement` (holding the yield) is a simple statement of that block
    or an `if` of it, of simple statements, testing only that the counter has passed a threshold
    (`if c >= start:`)."""
    block = _block(loop)
    increments = [part for part in block if isinstance(part, cst.SimpleStatementLine) and len(part.body) == 1
                  and isinstance(part.body[0], (cst.AugAssign, cst.Assign))
                  and _increments(part.body[0], counter)]
    inside = list(_own_nodes(loop.body))
    if len(increments) != 1 or sum(_bound([part], counter) for part in inside) != 1:
        return False
    if _continues(loop.body):
        return False
    if isinstance(statement, cst.If):
        return statement.orelse is None and threshold(statement.test, counter) \
            and all(isinstance(inner, cst.SimpleStatementLine) for inner in _block(statement))
    return isinstance(statement, cst.SimpleStatementLine)


def _increments(statement: cst.BaseSmallStatement, counter: str) -> bool:
    if isinstance(statement, cst.AugAssign):
        return isinstance(statement.target, cst.Name) and statement.target.value == counter \
            and isinstance(statement.operator, cst.AddAssign) and int_value(statement.value) == 1
    if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
        target, value = statement.targets[0].target, statement.value
        return isinstance(target, cst.Name) and target.value == counter \
            and isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add) \
            and dotted_name(value.left) == counter and int_value(value.right) == 1
    return False


def _continues(node: cst.CSTNode) -> bool:
    """A `continue` of this loop (not of a loop nested in it)."""
    for child in children(node):
        if isinstance(child, cst.Continue):
            return True
        if isinstance(child, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            if isinstance(child, (cst.For, cst.While)) and child.orelse is not None and _continues(child.orelse):
                return True
            continue
        if _continues(child):
            return True
    return False


def threshold(test: cst.BaseExpression, counter: str) -> bool:
    """`c >= start`, `c > start`, `start <= c`, `start < c`: true from some count on, for good."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    operator, right = test.comparisons[0].operator, test.comparisons[0].comparator
    if dotted_name(test.left) == counter and isinstance(operator, (cst.GreaterThanEqual, cst.GreaterThan)):
        return counter not in {p.value for p in preorder(right) if isinstance(p, cst.Name)}
    if dotted_name(right) == counter and isinstance(operator, (cst.LessThanEqual, cst.LessThan)):
        return counter not in {p.value for p in preorder(test.left) if isinstance(p, cst.Name)}
    return False


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
