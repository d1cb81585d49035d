"""The `TrainingLoop` facade: one loop's facts, and the questions more than one rule asks of them.

A *training loop* is a `for`/`while` statement whose body, looking through
`if`/`with`/`try` but not into nested loops, functions or classes, calls a
backward (`loss.backward()`, `torch.autograd.backward(loss)`,
`scaler.scale(loss).backward()`, `accelerator.backward(loss)`,
`self.manual_backward(loss)`) or `torch.autograd.grad`.

Its facts come from the function's control-flow graph (`torchlint.flow`):
the sites in the body (`sites`), what the receivers are (`roles`), the
counters and window conditions (`windows`), where a loss comes from
(`origin`) and what carries a graph (`graph`). Whether one thing runs
before, whenever or after another is a question of dominance and paths in
that graph, never of source order.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Callable, Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from torchlint.flow import ControlFlowGraph, Definition, FunctionFlow, Iteration, scopes
from torchlint.flow.cfg import block_of
from torchlint.names import (
    NO_GRAD_CONTEXTS, ModuleNames, dotted_name, int_value, iter_names, keyword, positional, short_callee, slot_of,
)
from torchlint.training import frameworks, graph, nodes, roles, windows
from torchlint.training.calls import (
    Functions, Scope, Via, argument_for, default_of, parameter_names, returned_values,
)
from torchlint.training.forward import model_forwards
from torchlint.training.nodes import GraphNodes, Region
from torchlint.training.origin import Division, DivisionFinder, LossOrigin, OriginTracer
from torchlint.training.timeline import Run, simulate
from torchlint.training.sites import (
    Assignment, BackwardSite, CallSite, Guard, ResetSite, ScaleSite, Site, SiteCollector, StepSite, guards_of,
)
from torchlint.training.windows import AccumulationCheck, InnerWindow, LoopCounter, is_number
from torchlint.walk import calls_in, preorder

Loop = Union[cst.For, cst.While]
Block = Sequence[Union[cst.BaseStatement, cst.BaseSmallStatement]]
Where = Union[Site, int]  # a site, or a control-flow node


@dataclass(frozen=True)
class TrainingLoop:
    node: Loop
    function: Optional[cst.FunctionDef]
    class_def: Optional[cst.ClassDef]
    enclosing: Tuple[Tuple[Block, int], ...]  # blocks around the loop, and its index in each
    flow: FunctionFlow
    iteration: Iteration
    backwards: Tuple[BackwardSite, ...]
    steps: Tuple[StepSite, ...]  # every `.step()`: optimizers, schedulers and others
    resets: Tuple[ResetSite, ...]
    scalings: Tuple[ScaleSite, ...]
    calls: Tuple[CallSite, ...]
    assignments: Tuple[Assignment, ...]
    counters: Tuple[LoopCounter, ...] = ()
    optimizer_names: FrozenSet[str] = frozenset()
    scheduler_names: FrozenSet[str] = frozenset()
    outer_contexts: Tuple[cst.BaseExpression, ...] = ()  # `with` items around the loop, in its function
    optimizer_models: Tuple[Tuple[str, FrozenSet[str]], ...] = ()  # optimizer -> models whose parameters it holds
    scheduled_optimizers: Tuple[Tuple[str, str], ...] = ()  # scheduler -> the optimizer it was built on
    top_statement: Optional[cst.CSTNode] = None  # the module-level statement that holds the loop
    names: Optional[ModuleNames] = field(default=None, compare=False)
    functions: Optional[Functions] = field(default=None, compare=False, repr=False)  # the file's, `training.calls`
    framework: Optional[str] = None  # `ignite`/`lightning`: a function a framework calls once per iteration,
    # seen as the body of a loop (`node` is then a `while True:` around its body, made for the analysis)
    memo: Dict[tuple, object] = field(default_factory=dict, compare=False, repr=False)  # answers asked again
    whole_run: Optional[bool] = None  # the loop is the whole run: nothing runs it again for a next epoch

    def _remember(self, key: tuple, compute):
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]

    # --- flow: what runs when ------------------------------------------------------------

    @staticmethod
    def _point(where: Where) -> Tuple[int, int]:
        return where.point if isinstance(where, Site) else (where, 0)

    @staticmethod
    def _in_one_call(a: Where, b: Where) -> Optional[int]:
        """Two sites one call of the loop runs (`update()` running `opt.step()` then `sched.step()`): they
        share the call's point, and run, on every call, in the order of the function's statements. Their
        order (negative: `a` first), else None."""
        if isinstance(a, Site) and isinstance(b, Site) and a.via is not None and b.via is not None \
                and a.point == b.point and a.via.call is b.via.call:
            return a.via.order - b.via.order
        return None

    def dominates(self, a: Where, b: Where) -> bool:
        """Whenever `b` runs, `a` has run before it in the same iteration."""
        order = self._in_one_call(a, b)
        if order is not None:
            return order <= 0
        return self.iteration.dominates(self._point(a), self._point(b))

    def runs_whenever(self, a: Where, b: Where) -> bool:
        """`a` runs in every iteration in which `b` runs."""
        return self.iteration.runs_whenever(self._point(a), self._point(b))

    def precedes(self, a: Where, b: Where) -> bool:
        """`a` may run before `b` in the same iteration."""
        order = self._in_one_call(a, b)
        if order is not None:
            return order < 0
        return self.iteration.precedes(self._point(a), self._point(b))

    def reaches(self, a: Where, b: Where, avoiding: FrozenSet[int] = frozenset(), around: bool = True) -> bool:
        """A path from `a` to `b` through no node in `avoiding`, into a later iteration if `around`."""
        order = self._in_one_call(a, b)
        if order is not None and order < 0:
            return True
        return self.iteration.reaches(self._point(a), self._point(b), avoiding, around)

    def on_every_pass(self, sites: Sequence[Where]) -> bool:
        """Every pass through the iteration that does not raise runs one of `sites` (a forward in each branch of
        an `if`/`else`)."""
        return bool(sites) and self.iteration.every_pass_runs(frozenset(self._point(site)[0] for site in sites))

    def reaching(self, name: str, where: Where) -> List[Definition]:
        """The definitions of `name` that may give its value at `where` (a `start` one: from before the iteration)."""
        return self.iteration.reaching(self._point(where)[0], name)

    def read_later(self, name: str, where: Where) -> bool:
        """The value `name` has at `where` is read again later in the same iteration."""
        return self.iteration.read_later(self._point(where), name)

    def guards_at(self, node: int) -> Tuple[Guard, ...]:
        """The branches a control-flow node runs in, as a site's `guards`."""
        return self._remember(("guards", node), lambda: guards_of(self.iteration, self.flow.graph.nodes[node]))

    def values_at(self, name: str, where: Where) -> List[Optional[cst.BaseExpression]]:
        """The values `name` may have at `where`: assigned in the iteration, or before the loop."""
        values: List[Optional[cst.BaseExpression]] = []
        for definition in self.reaching(name, where):
            if definition.kind == "start":
                values.append(self.value_before_loop(name))
            elif definition.kind == "assign" and not definition.unpacked:
                values.append(definition.value)
            else:
                values.append(None)
        return values

    def assignment_of(self, definition: Definition) -> Optional[Assignment]:
        for assignment in self.assignments:
            if assignment.definition is definition:
                return assignment
        return None

    # --- the questions rules ask ------------------------------------------------------------

    @property
    def loop_backwards(self) -> Tuple[BackwardSite, ...]:
        """Backward calls that make this a training loop (not nested, not `autograd.grad`)."""
        return tuple(b for b in self.backwards if b.depth == 0 and b.kind != "grad")

    @property
    def own_backwards(self) -> Tuple[BackwardSite, ...]:
        """The loop's backwards written in its own body, not run by a function it calls: the ones whose
        loss can be followed through the loop's own variables."""
        return tuple(b for b in self.loop_backwards if b.via is None)

    @property
    def optimizer_steps(self) -> Tuple[StepSite, ...]:
        return tuple(s for s in self.steps if s.receiver in self.optimizer_names)

    @property
    def scheduler_steps(self) -> Tuple[StepSite, ...]:
        return tuple(s for s in self.steps if s.receiver in self.scheduler_names and not s.via_scaler)

    @property
    def window_steps(self) -> Tuple[StepSite, ...]:
        """The optimizer steps, one per window: of the steps that are `alternatives` of each other
        (`if use_amp: scaler.step(opt)` / `else: opt.step()`), the first. A rule about the window (what its
        condition does, what its backwards add up to) reports it once."""
        return self._remember(("window_steps",), lambda: tuple(
            step for step in self.optimizer_steps
            if not any(other.order < step.order for other in self.alternatives(step))))

    def alternatives(self, site: Site) -> Tuple[Site, ...]:
        """The sites that stand for the same action as `site` on other branches of the iteration, one of which
        runs: the same optimizer's step under the same window conditions (`scaler.step(opt)` with AMP,
        `opt.step()` without), or the backward of the same loss value (`scaler.scale(loss).backward()` /
        `loss.backward()`). Neither runs before the other in an iteration."""
        return self._remember(("alternatives", id(site)), lambda: tuple(self._alternatives(site)))

    def _alternatives(self, site: Site) -> Iterator[Site]:
        if site.depth != 0 or site.via is not None:
            return
        if isinstance(site, StepSite):
            candidates: Sequence[Site] = [s for s in self.optimizer_steps if s.receiver == site.receiver]
        elif isinstance(site, BackwardSite) and site.loss_name is not None:
            candidates = [b for b in self.own_backwards if b.loss_name == site.loss_name
                          and "distributed" not in (b.kind, site.kind)]
        else:
            return
        for other in candidates:
            if other is site or other.depth != 0 or other.via is not None:
                continue
            if self.precedes(site, other) or self.precedes(other, site):
                continue
            if isinstance(site, StepSite) and not self._same_windows(site, other):
                continue
            if isinstance(site, BackwardSite) and not self._same_value(site.loss_name, site, other):
                continue
            yield other

    def _same_windows(self, a: StepSite, b: StepSite) -> bool:
        first, second = self.accumulation_checks(a), self.accumulation_checks(b)
        return len(first) == len(second) and all(x.same_window(y) for x, y in zip(first, second))

    def _same_value(self, name: str, a: Site, b: Site) -> bool:
        """`name` has the same definitions reaching `a` and `b`."""
        return {id(d) for d in self.reaching(name, a)} == {id(d) for d in self.reaching(name, b)}

    def split_between(self, a: Site, b: Site) -> Optional[cst.If]:
        """The `if` statement whose branches `a` and `b` take (`if use_amp: ... else: ...`), when it is a
        statement of its own (not an `elif`): a line inserted before it runs before either."""
        for guard in a.guards:
            for other in b.guards:
                if guard.node is other.node and guard.negated != other.negated and isinstance(guard.node, cst.If):
                    if guard.after_continue or other.after_continue or self._is_elif(guard.node):
                        return None
                    return guard.node
        return None

    def _is_elif(self, statement: cst.If) -> bool:
        return any(isinstance(part, cst.If) and part.orelse is statement for part in preorder(self.node))

    def steps_each_walked(self, step: StepSite) -> bool:
        """`step` sits in loops nested in this one that only walk the optimizers it steps (`for optimizer in
        self.optimizers: optimizer.step()`), with no backward in them: it steps each of them once where it
        runs, as a step at the loop's own level does; not an inner loop that is itself a window."""
        graph = self.flow.graph
        base = len(graph.nodes[self.iteration.region.head].loops)
        inner = graph.nodes[step.point[0]].loops[base:]
        if not inner:
            return True
        for nested in inner:
            if not isinstance(nested, cst.For) or dotted_name(nested.target) != step.receiver:
                return False
            if any(nested in graph.nodes[backward.point[0]].loops for backward in self.backwards):
                return False
        return True

    def counter(self, name: Optional[str]) -> Optional[LoopCounter]:
        for counter in self.counters:
            if counter.name == name:
                return counter
        return None

    def first_value(self, counter: LoopCounter, where: Where) -> Optional[int]:
        """The counter's value on the first micro-batch, read at `where`."""
        if counter.start is None:
            return None
        if counter.increment is not None and self.dominates(counter.increment, where):
            return counter.start + 1
        return counter.start

    def accumulation_checks(self, site: Site) -> List[AccumulationCheck]:
        """Every accumulation condition among the `if`s guarding `site` (normally a step).

        For a step, a condition counts only when gradients really build up across
        iterations under it: not when the step's own reset runs inside the
        condition before it (WGAN's `if i % n_critic == 0: opt_g.zero_grad(); ...;
        opt_g.step()` is a schedule, not a window), and not when every backward
        outside it is applied by another optimizer's unconditional step.
        """
        return list(self._remember(("checks", id(site)), lambda: self._accumulation_checks(site)))

    def _accumulation_checks(self, site: Site) -> Tuple[AccumulationCheck, ...]:
        checks = []
        for guard in site.guards:
            for check in self._checks_of(guard):
                if check.counter is not None and site.depth and self._inner_counter(check):
                    continue  # `for i in ...` nested in `for i, x in enumerate(...)`: another loop's counter
                if check.kind == "count" and (self.counter(check.counter) is None or not self._restarts(check)):
                    continue
                if check.kind == "since":
                    check = self._since_window(check)
                    if check is None:
                        continue
                if self.count_value(check.count) == 1 or frameworks.deepspeed_window(self, check.count):
                    continue
                if isinstance(site, StepSite) and not self._accumulates(site, check):
                    continue
                checks.append(check)
        if isinstance(site, StepSite) and checks:
            return self._whole_window(site, tuple(checks))
        return tuple(checks)

    def _whole_window(self, step: StepSite, checks: Tuple[AccumulationCheck, ...]) -> Tuple[AccumulationCheck, ...]:
        """`checks` when the step runs on each of their windows' last micro-batch; none when a further
        condition of the step's own, one its backwards do not share, may not hold there: a logging
        condition on another counter (`if glb_step % log_every == 0:` in `if step % n == 0:`), `if ready:`,
        `if (i + 1) % n == 0 and ready:` (the window is then not `n` micro-batches, and what it is the code
        does not say). A condition that does not change in the loop (`if optimizer is not None:`,
        `if args.clip > 0:`) and a window of one micro-batch hold on every boundary. Of two windows on one
        counter whose count is a multiple of the other's (`i % (2 * n) == 0` in `i % n == 0`), the step
        runs on the wider's."""
        shared = {(id(guard.node), guard.negated) for backward in self.loop_backwards for guard in backward.guards}
        required: List[List[AccumulationCheck]] = []
        for guard in step.guards:
            if (id(guard.node), guard.negated) in shared:
                continue
            for test, holds in windows.conjuncts(guard.test, not guard.negated):
                found = list(self._checks_in(guard, test, holds))
                mine = [check for check in checks if any(check.expression is own.expression for own in found)]
                if mine:
                    required.append(mine)
                elif not self._holds_on_boundaries(test, holds, found, checks) \
                        and not self._only_skips_step(step, guard, checks):
                    return ()
        if len(required) < 2 or all(check.same_window(checks[0]) for group in required for check in group):
            return checks
        if any(len(group) > 1 for group in required):
            return ()
        if len(required) == 2:
            (first,), (second,) = required
            for outer, inner in ((first, second), (second, first)):
                if self._counts_windows_of(inner, outer):
                    return (windows.product_window(outer, inner),)
        for (wide,) in required:
            if all(other is wide or other.same_window(wide) or windows.multiple_of(wide, other, self.count_value)
                   for (other,) in required):
                return (wide,)
        return ()

    def _counts_windows_of(self, inner: AccumulationCheck, outer: AccumulationCheck) -> bool:
        """`inner`'s counter numbers `outer`'s windows: `glb_step += 1` where `outer` (`actual_step % n == 0`)
        lets the step through and nowhere else, read after that by `inner` (`glb_step % f == 0`), so `inner` holds
        on every `f`-th of `outer`'s windows: a window of `n * f` micro-batches. Both start from 0 together: the
        outer counter is 1 on the first micro-batch, the window counter 0 before it, and each is set back to its
        start before every run of the loop, or neither is (both run on from epoch to epoch)."""
        if inner.kind != "modulo" or outer.kind != "modulo" or "zero" != inner.remainder or "zero" != outer.remainder \
                or inner.offset != 0 or inner.counter is None or outer.counter is None:
            return False
        counter = self.counter(outer.counter)
        if counter is None or counter.start is None or counter.resumed \
                or self.first_value(counter, outer.read_at(outer.guard.read_at)) + outer.offset != 1:
            return False
        name = inner.counter
        region = self.iteration.region
        updates = [a for a in self.assignments if a.target == name]
        if sum(1 for index in region.body for d in self.flow.graph.nodes[index].definitions if d.name == name) != 1 \
                or len(updates) != 1 or not windows.is_increment(updates[0]) or updates[0].depth != 0:
            return False
        bump = updates[0]
        if not bump.guards or any(guard.node is not outer.guard.node or guard.negated != outer.guard.negated
                                  for guard in bump.guards):
            return False
        if not self.dominates(bump, inner.read_at(inner.guard.read_at)):
            return False
        if int_value(self.fresh_value(name)) != 0 or self.restored_before_loop(name):
            return False
        if any(self.assigned_in_loop(read) for check in (inner, outer) for read in iter_names(check.count)):
            return False
        outer_restarts = counter.source in ("enumerate", "range") or counter.paced
        inner_restarts = _restarted_each_run(self, name, 0)
        return outer_restarts == inner_restarts

    def _only_skips_step(self, step: StepSite, guard, checks: Tuple[AccumulationCheck, ...]) -> bool:
        """A further condition of the step (`if math.isnan(grad_norm): warn` / `else: optimizer.step()`) that
        the window's reset does not share: the stepped optimizer's `zero_grad()` runs after the step under the
        window's own conditions only, so a window whose step is skipped is cleared all the same and the next
        one starts afresh. The window is still the checks'; only some of its steps are left out."""
        single = len(self.optimizer_names) == 1
        own = {(id(g.node), g.negated) for g in step.guards}
        windows_guards = {id(check.guard.node) for check in checks}
        for reset in self.resets:
            if reset.kind != "zero_grad" or reset.depth != 0 or not (reset.target == step.receiver or single):
                continue
            guards = {(id(g.node), g.negated) for g in reset.guards}
            if (id(guard.node), guard.negated) in guards or (id(guard.node), not guard.negated) in guards \
                    or not guards <= own or not any(g.node is not None and id(g.node) in windows_guards
                                                    for g in reset.guards):
                continue
            if self.precedes(step, reset) and not self.precedes(reset, step):
                return True
        return False

    def _holds_on_boundaries(self, test: cst.BaseExpression, holds: bool, found: List[AccumulationCheck],
                             checks: Tuple[AccumulationCheck, ...]) -> bool:
        """A further condition of a step under `checks` lets it through on every window boundary, or on all
        from some count on: a window of one micro-batch, what nothing in the loop changes (`optimizer is not
        None`), a threshold on the window's counter against such a bound (`batch_idx > 0`)."""
        if any(self.count_value(own.count) == 1 for own in found):
            return True
        counters = {check.counter for check in checks if check.counter is not None}
        if holds and any(windows.threshold(test, counter) for counter in counters):
            return not any(self.assigned_in_loop(name) for name in iter_names(test) if name not in counters)
        return not any(self.assigned_in_loop(name) for name in iter_names(test))

    def _checks_of(self, guard: Guard) -> Iterator[AccumulationCheck]:
        """The window conditions a branch tests, also through a flag assigned one (`if not is_accumulating:`)."""
        return self._checks_in(guard, guard.test, not guard.negated)

    def _checks_in(self, guard: Guard, test: cst.BaseExpression, holds: bool) -> Iterator[AccumulationCheck]:
        """The window conditions in `test`, part of `guard`'s, read where the guard reads its names."""
        return windows.checks_in(test, guard, holds, functools.partial(self._flag, guard.read_at),
                                 functools.partial(self._cycle, guard.read_at), self._method_condition)

    def _cycle(self, node: int, value: cst.BaseExpression, depth: int = 0) -> Optional[cst.BaseExpression]:
        """The count N that `value`, read at `node`, cycles modulo: `idx` after `idx = i % N` (or after
        `idx = slot(i, N)`, a function of the file that returns `i % n`), or
        `meta["grad_accum_index"]` where `meta` is what the loop draws from a generator of the file that
        yields `{"grad_accum_index": c % N, ...}` (or `index` drawn from `yield c % N, batch`) for a counter `c`
        it moves by one per yield (`N` is then
        the argument the loop's call passes for that parameter, and must keep its value through the loop)."""
        if node < 0 or depth > 2:
            return None
        if isinstance(value, cst.Name):
            drawn = self._drawn_from_generator(node, value.value)
            if drawn is not None:  # `for index, batch in batches(...)` yielding `c % n, batch`
                return self._cycled_argument(drawn, None)
            held = self._flag(node, value.value)
            if held is None:
                return None
            if isinstance(held[0], cst.BinaryOperation) and isinstance(held[0].operator, cst.Modulo):
                return held[0].right
            if isinstance(held[0], cst.Call):
                # `slot = window_slot(step, accum)` with `def window_slot(i, n): return i % n`
                function = self._file_function(held[0])
                parameter = windows.returned_remainder(function) if function is not None else None
                count = _argument_for(held[0], function, parameter) if parameter is not None else None
                return count if count is not None and self._constant(count) is True else None
            return self._cycle(held[1], held[0], depth + 1)
        if not isinstance(value, cst.Subscript) or not isinstance(value.value, cst.Name) or len(value.slice) != 1:
            return None
        index = value.slice[0].slice
        if not isinstance(index, cst.Index) or not isinstance(index.value, cst.SimpleString):
            return None
        key = index.value.evaluated_value
        drawn = self._drawn_from_generator(node, value.value.value)
        if drawn is None or not isinstance(key, str) or self._changes_entries(value.value.value):
            return None
        return self._cycled_argument(drawn, key)

    def _changes_entries(self, name: str) -> bool:
        """The loop's body may change the entries of the dict `name` holds: `meta["index"] = ...`,
        `del meta[...]`, a method of it called (`meta.update(...)`), or the dict handed to a call."""
        for part in preorder(self.node.body):
            targets: List[cst.CSTNode] = list(_assignment_targets(part))
            if isinstance(part, cst.Del):
                targets.append(part.target)
            if any(isinstance(target, cst.Subscript) and dotted_name(target.value) == name for target in targets):
                return True
            if isinstance(part, cst.Call) and isinstance(part.func, cst.Attribute) \
                    and dotted_name(part.func.value) == name:
                return True
            if isinstance(part, cst.Arg) and isinstance(part.value, cst.Name) and part.value.value == name:
                return True
        return False

    def _cycled_argument(self, drawn: Tuple[cst.Call, cst.FunctionDef, Optional[int], int],
                         key: Optional[str]) -> Optional[cst.BaseExpression]:
        """What the loop's call passes for the count its generator's window index cycles modulo, when that
        argument keeps its value through the loop."""
        call, generator, position, width = drawn
        parameter = windows.cycled_entry(generator, position, width, key)
        count = _argument_for(call, generator, parameter) if parameter is not None else None
        if count is None or self._constant(count) is not True:
            return None
        return count

    def _drawn_from_generator(self, node: int, name: str
                              ) -> Optional[Tuple[cst.Call, cst.FunctionDef, Optional[int], int]]:
        """When `name` at `node` holds what this `for` loop draws from a call of a function of the file
        (`for meta, batch in batches(...)`, also through a name bound before the loop): that call, the function,
        where `name` sits in the loop's target tuple (None: it is the target) and the tuple's width."""
        loop = self.node
        if not isinstance(loop, cst.For) or self.functions is None:
            return None
        found = self.reaching(name, node)
        if len(found) != 1 or found[0].kind != "target" or found[0].syntax is not loop:
            return None
        target, position, width = loop.target, None, 1
        if isinstance(target, (cst.Tuple, cst.List)):
            names = [element.value for element in target.elements]
            matches = [i for i, element in enumerate(names) if isinstance(element, cst.Name) and element.value == name]
            if len(matches) != 1 or any(isinstance(e, cst.StarredElement) for e in target.elements):
                return None
            position, width = matches[0], len(names)
        elif not (isinstance(target, cst.Name) and target.value == name):
            return None
        iterable = windows.unwrap(loop.iter)
        if isinstance(iterable, cst.Name):
            before = self.value_before_loop(iterable.value)
            iterable = windows.unwrap(before) if before is not None else iterable
        if not isinstance(iterable, cst.Call):
            return None
        generator = self._file_function(iterable)
        return (iterable, generator, position, width) if generator is not None else None

    def _file_function(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        """The function of this file a call of a plain name runs, when the file defines that name once (not
        `if fast: def batches ...` / `else: def batches ...`)."""
        if self.functions is None or not isinstance(call.func, cst.Name):
            return None
        function = self.functions.callee(call, self.function)
        if function is None or (self.names is not None and len(self.names.functions.get(call.func.value, [])) > 1):
            return None
        return function

    def _method_condition(self, call: cst.Call) -> Optional[cst.BaseExpression]:
        """What `receiver.method(args)` returns, in this loop's terms, when `receiver` is an object of a class of
        this file (every binding and annotation of it says that class) and `method` a predicate of it
        (`windows.returned_condition`): `batch_idx.is_interval(self.update_batches)` ->
        `... (batch_idx.idx + 1) % self.update_batches == 0`."""
        func = call.func
        names = self.names
        receiver = dotted_name(func.value) if isinstance(func, cst.Attribute) else None
        if receiver is None or names is None or any(arg.star for arg in call.args):
            return None
        told = [value.func if isinstance(value, cst.Call) else None for value in names.values_of(receiver)]
        told += list(names.annotations.get(receiver, ()))
        built = {part.value if isinstance(part, cst.Name) else None for part in told}
        classes = names.classes.get(next(iter(built))) if len(built) == 1 and None not in built else None
        if not classes or len(classes) != 1 or names.functions.get(classes[0].name.value) \
                or classes[0].name.value in names.aliases:
            return None
        methods = [statement for statement in block_of(classes[0]) if isinstance(statement, cst.FunctionDef)
                   and statement.name.value == func.attr.value and not statement.decorators]
        returned = windows.returned_condition(methods[0]) if len(methods) == 1 else None
        if returned is None:
            return None
        parameters = methods[0].params
        if isinstance(parameters.star_arg, cst.Param) or parameters.star_kwarg is not None or not parameters.params:
            return None
        values: Dict[str, cst.BaseExpression] = {parameters.params[0].name.value: func.value}
        positional_args = [arg.value for arg in call.args if arg.keyword is None]
        keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
        for index, parameter in enumerate(list(parameters.params[1:]) + list(parameters.kwonly_params)):
            name = parameter.name.value
            given = positional_args[index] if index < len(positional_args) and parameter in parameters.params \
                else keywords.get(name, parameter.default)
            if given is None:
                return None
            values[name] = given
        return windows.substituted(returned, values)

    def _flag(self, node: int, name: str) -> Optional[Tuple[cst.BaseExpression, int]]:
        """The condition `name` holds at `node` (`is_accumulating = i % n != 0`) and where it is assigned:
        one plain assignment in this iteration, on every path to `node`."""
        if node < 0:
            return None
        found = self.reaching(name, node)
        if len(found) != 1 or found[0].kind != "assign" or found[0].unpacked or found[0].value is None:
            return None
        return found[0].value, found[0].node

    def accumulation_check(self, site: Site) -> Optional[AccumulationCheck]:
        checks = self.accumulation_checks(site)
        return checks[0] if checks else None

    def _inner_counter(self, check: AccumulationCheck) -> bool:
        """The counter the check reads is the target of a loop nested in this one."""
        return any(
            definition.kind == "target" and isinstance(definition.syntax, cst.For) and definition.syntax is not self.node
            for definition in self.reaching(check.counter, check.read_at(check.guard.assume))
        )

    def _restarts(self, check: AccumulationCheck) -> bool:
        """`micro = 0` where `check` holds: a window that starts again, not a one-way threshold
        like `if seen >= warmup_steps: optimizer.step()`."""
        return any(
            assignment.target == check.counter and not assignment.reads_target and self.in_branch(assignment, check)
            for assignment in self.assignments
        )

    def _since_window(self, check: AccumulationCheck) -> Optional[AccumulationCheck]:
        """`ni - last_opt_step >= accumulate` as a window of `accumulate` micro-batches, when the code makes it
        one: `last_opt_step` is given its first value before the loop (`-1`) and is set in it only to `ni`, only
        where the check lets the step through; `ni` advances by one each micro-batch: the loop's counter, or that counter plus
        what the loop does not change (`ni = i + nb * epoch`). The check comes back counting with the loop's
        counter (`i`); None otherwise (`last` never updated is a threshold, not a window)."""
        stamp, last = check.stamp, check.since
        if stamp is None or last is None:
            return None
        updates = [definition for index in self.iteration.region.body
                   for definition in self.flow.graph.nodes[index].definitions if definition.name == last]
        if not updates or any(
            definition.kind != "assign" or definition.unpacked or dotted_name(definition.value) != stamp
            or check.guard.assume < 0 or not self.dominates(check.guard.assume, definition.node)
            for definition in updates
        ):
            return None
        before = self.flow.entering(self.iteration.region, last)
        if not before or any(definition.kind != "assign" or definition.value is None for definition in before):
            return None  # the mark's first value is the code's (`last_opt_step = -1`), not a caller's
        counter = self._advancing_with(stamp, check.read_at(check.guard.assume))
        if counter is None:
            return None
        return dataclasses.replace(check, counter=counter.name)

    def carried_into_next_run(self, name: str) -> bool:
        """The value the loop leaves in `name` is the one it starts with when it runs again (an epoch loop
        around it, nothing setting `name` between the two runs)."""
        return any(definition.node in self.iteration.region.body
                   for pred in self.iteration.region.entry for definition in self.flow.leaving(pred, name))

    def _advancing_with(self, name: str, where: int) -> Optional[LoopCounter]:
        """The loop's counter that `name` moves with at `where`: the counter itself, or `i + offset` assigned
        in the iteration, where nothing in the loop changes `offset` (`ni = i + nb * epoch`)."""
        counter = self.counter(name)
        if counter is not None:
            return counter
        found = self.reaching(name, where)
        if len(found) != 1 or found[0].kind != "assign" or found[0].unpacked or found[0].node not in \
                self.iteration.region.body:
            return None
        value = found[0].value
        if not isinstance(value, cst.BinaryOperation) or not isinstance(value.operator, cst.Add):
            return None
        for counted, offset in ((value.left, value.right), (value.right, value.left)):
            counter = self.counter(dotted_name(counted))
            if counter is not None and not any(self.assigned_in_loop(read) for read in iter_names(offset)):
                return counter
        return None

    def in_branch(self, site: Site, check: AccumulationCheck) -> bool:
        """`site` runs only on iterations where `check` lets the step through (for a window counted in windows of
        another, `glb_step % f == 0` in `actual_step % n == 0`, where both do)."""
        if check.counted_by is not None and not self.in_branch(site, check.counted_by):
            return False
        return check.guard.assume >= 0 and self.dominates(check.guard.assume, site)

    def once_per_window(self, site: Site, check: AccumulationCheck) -> bool:
        """`site` runs in `check`'s branch, or under its own condition on the same window:
        `if (i + 1) % n == 0: scheduler.step()` next to `if (i + 1) % n == 0 or last: optimizer.step()`."""
        if self.in_branch(site, check):
            return True
        return any(own.same_window(check) for guard in site.guards for own in self._checks_of(guard))

    def schedule_counts(self, scheduler: StepSite, check: AccumulationCheck) -> Optional[str]:
        """What the horizon of `scheduler`'s schedule counts, read from its construction in the file:
        "micro-batches" when it is the number of micro-batches this loop runs (`len(loader) * epochs`,
        `OneCycleLR(..., steps_per_epoch=len(loader), epochs=E)`, the `n` of `for i in range(n)`): stepped on
        every micro-batch, it spans the run; "updates" when it is divided by `check`'s count
        (`len(loader) // accum * epochs`); None when the code does not show which."""
        if self.names is None:
            return None
        built = self.value_before_loop(scheduler.receiver)  # else the file's bindings (`self.scheduler = ...`)
        horizons = roles.scheduler_horizons([built] if built is not None else
                                            self.names.values_of(scheduler.receiver), self.names)
        if horizons is None:
            return None
        units = {self._horizon_unit(factors, check) for factors in horizons}
        return units.pop() if len(units) == 1 else None

    def _horizon_unit(self, factors: Tuple[cst.BaseExpression, ...], check: AccumulationCheck) -> Optional[str]:
        counted = self._counted_iterable()
        if isinstance(counted, cst.Call) and dotted_name(counted.func) == "range" and len(counted.args) == 1 \
                and len(factors) == 1 and self._same_expression(factors[0], counted.args[0].value):
            return "micro-batches"  # `for it in range(max_iters * accum)` and `T_max=max_iters * accum`
        found = set()
        pending = [(factor, 0) for factor in factors]
        while pending:
            node, depth = pending.pop()
            if depth > 6:
                return None
            if isinstance(node, cst.BinaryOperation):
                if isinstance(node.operator, cst.Multiply):
                    pending += [(node.left, depth + 1), (node.right, depth + 1)]
                elif isinstance(node.operator, (cst.Divide, cst.FloorDivide)) and self.same_count(node.right, check.count):
                    found.add("updates")
                    pending.append((node.left, depth + 1))
                else:
                    return None  # divided by something else, or a sum: not a count of either
            elif isinstance(node, cst.Call):
                callee = dotted_name(node.func)
                argument = positional(node, 0)
                if callee == "len" and argument is not None and counted is not None \
                        and self._same_iterable(argument, counted):
                    found.add("len")
                elif callee in ("int", "math.ceil", "math.floor", "round", "ceil", "floor") and argument is not None:
                    pending.append((argument, depth + 1))
            elif dotted_name(node) is not None:
                value = self.known_value(dotted_name(node))
                if value is not None:
                    pending.append((value, depth + 1))
        if "updates" in found:
            return "updates"
        return "micro-batches" if "len" in found else None

    def _counted_iterable(self) -> Optional[cst.BaseExpression]:
        """What this loop runs over: `loader` of `for i, batch in enumerate(tqdm(loader))`, `range(n)`."""
        header = next((c for c in self.counters if c.source in ("enumerate", "range")), None)
        if header is not None:
            return header.iterable
        if not isinstance(self.node, cst.For):
            return None
        iterable = windows.unwrap(self.node.iter, self.names)
        if isinstance(iterable, cst.Name):
            before = self.value_before_loop(iterable.value)
            iterable = windows.unwrap(before, self.names) if before is not None else iterable
        return iterable

    def _same_iterable(self, a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
        """`train_loader` and `self.train_loader = train_loader` (or `accelerator.prepare(...)` of it)."""
        first, second = dotted_name(a), dotted_name(b)
        if first is None or second is None:
            return False
        return first == second or (self.names is not None and second in self.names.aliases_of(first))

    def _same_expression(self, a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
        if a.deep_equals(b):
            return True
        name = dotted_name(a)
        value = self.known_value(name) if name is not None else None
        return value is not None and value.deep_equals(b)

    def accumulated_backwards(self, step: StepSite, check: AccumulationCheck) -> List[BackwardSite]:
        """Backwards whose gradients wait, over several iterations, for `step` under `check`."""
        found = []
        for backward in self.loop_backwards:
            if self.in_branch(backward, check):
                # Only a loss summed over the window (`loss = loss + l`) spans iterations here.
                if backward.via is None and backward.loss_name is not None \
                        and self.accumulator(backward.loss_name) is not None:
                    found.append(backward)
            elif not self._applied_elsewhere(backward, step):
                found.append(backward)
        return found

    def _accumulates(self, step: StepSite, check: AccumulationCheck) -> bool:
        for reset in self.resets_affecting(step):
            if self.dominates(reset, step) and self.in_branch(reset, check):
                return False
        return bool(self.accumulated_backwards(step, check))

    def _applied_elsewhere(self, backward: BackwardSite, step: StepSite) -> bool:
        """Another step runs whenever `backward` runs: another optimizer's (a GAN's generator), or the
        same optimizer's in a branch that does not accumulate (`if accum > 1: ... else: ...; opt.step()`)."""
        return any(
            other is not step and other.depth == 0 and self.runs_whenever(other, backward)
            for other in self.optimizer_steps
        )

    def gradients_normalised(self, step: StepSite) -> Optional[ScaleSite]:
        """The in-place rescaling of the gradients (`p.grad.div_(n_tokens)`, `scale_grads(model, 1 / n)`)
        that may run after a backward and before `step`, by a count that is not a constant: the window is
        normalised by hand, as token-count normalisation does. (It may sit under a flag of its own,
        `if not optimizer_in_backward:`.) A division by a constant is `gradients_divided`'s."""
        for scaling in self._scalings_before(step):
            if self.divides_by_constant(scaling) is not True:
                return scaling
        return None

    def gradients_divided(self, step: StepSite, check: AccumulationCheck) -> Optional[ScaleSite]:
        """The window's gradients divided in place by a constant once, after its backwards and before `step`
        (`if (i + 1) % n == 0: for p in model.parameters(): p.grad.div_(n)`): the same as dividing each
        micro-batch's loss by it. (Divided on every micro-batch, earlier micro-batches' gradients would be
        divided again and again.)"""
        for scaling in self.constant_gradient_divisions(step):
            if self.once_per_window(scaling, check):
                return scaling
        return None

    def constant_gradient_divisions(self, step: StepSite) -> List[ScaleSite]:
        """The in-place divisions of the gradients by a constant that may run after a backward and before
        `step`, once per window or not."""
        return [scaling for scaling in self._scalings_before(step) if self.divides_by_constant(scaling) is True]

    def _scalings_before(self, step: StepSite) -> Iterator[ScaleSite]:
        for scaling in self.scalings:
            if self.precedes(scaling, step) and any(self.precedes(b, scaling) for b in self.loop_backwards):
                yield scaling

    def gradient_divisor(self, scaling: ScaleSite) -> Optional[cst.BaseExpression]:
        """What `scaling` divides the gradients by (`roles.grad_divisor`)."""
        return roles.grad_divisor(scaling.node, self.names, self.function) if self.names is not None else None

    def divides_by_constant(self, scaling: ScaleSite) -> Optional[bool]:
        """True when `scaling`'s divisor keeps its value through the loop (a number, `accum_steps`,
        `args.gradient_accumulation_steps`: nothing in the loop assigns it); False when the loop assigns it
        (a running token count, `num_tokens += n`); None when the code does not say."""
        divisor = self.gradient_divisor(scaling)
        if divisor is None:
            return None
        return self._constant(divisor)

    def _constant(self, node: cst.BaseExpression) -> Optional[bool]:
        if is_number(node):
            return True
        if isinstance(node, cst.BinaryOperation):
            left, right = self._constant(node.left), self._constant(node.right)
            return False if False in (left, right) else True if left and right else None
        name = dotted_name(node)
        if name is None:
            return None
        if any(definition.name == name for index in self.iteration.region.body
               for definition in self.flow.graph.nodes[index].definitions):
            return False
        if ("." in name or not self.flow.reaching(self.iteration.region.head, name)) and self._set_by_callees(name):
            return None  # `self.num_tokens`, a global: a function of the file the loop calls updates it
        return True

    def _set_by_callees(self, name: str) -> bool:
        """A function of the file that the loop calls assigns `name` (`self.num_tokens += n` in `self.count(y)`)."""
        functions = self.functions
        if functions is None:
            return False
        for site in self.calls:
            callee = functions.callee(site.node, self.function) if isinstance(site.node, cst.Call) else None
            if callee is not None and any(
                    dotted_name(target) == name for part in preorder(callee)
                    for target in _assignment_targets(part)):
                return True
        return False

    def normalisation_carries_over(self, step: StepSite) -> bool:
        """Micro-batches left over at the loop's end are weighed right by the window that takes them up: the
        gradients are normalised by a running count (`num_tokens += n` ... `p.grad.div_(num_tokens)`) and no
        gradient reset sits beside the loop (`optimizer.zero_grad()` just before or after it: the left-over
        gradients would be thrown away while a carried count still counts them), and the count is not seen to
        start again where the gradients do not: in an epochs' loop around this one, its value at the end comes
        back to the loop's head (`num_tokens = 0` before the epochs, not inside them). Where no loop around
        it shows how the loop runs again (a function called once per epoch), the count set before the loop
        tells nothing of the gradients it meets: the answer stays yes."""
        scaling = self.gradients_normalised(step)
        divisor = self.gradient_divisor(scaling) if scaling is not None else None
        count = dotted_name(divisor) if divisor is not None else None
        if count is None or self.accumulator(count) is None:
            return False
        if any(self.resets_beside(step.receiver)):
            return False
        region = self.iteration.region
        runs_again_here = len(self.flow.graph.nodes[region.head].loops) > 1  # an epochs' loop in this function
        return not runs_again_here or bool(self.flow.returning(region, count)) or not self.flow.entering(region, count)

    def resets_beside(self, optimizer: str) -> Tuple[bool, bool]:
        """(before, after): `optimizer.zero_grad()` (or the only optimizer's) among the statements just before
        the loop, and just after it, in its block; also in the block around a `with` that holds the loop
        (`self.model.zero_grad()` then `with tqdm(...) as pbar: for ...`): a `with` runs its body whenever
        it runs."""
        if not self.enclosing:
            return False, False
        single = len(self.optimizer_names) == 1

        def resets(block: Block) -> bool:
            return any(isinstance(call.func, cst.Attribute) and call.func.attr.value == "zero_grad"
                       and (single or dotted_name(call.func.value) == optimizer)
                       for statement in executed(block) for call in calls_in(statement))

        before = after = False
        for level in range(len(self.enclosing) - 1, -1, -1):
            statements, index = self.enclosing[level]
            before = before or resets(statements[:index])
            after = after or resets(statements[index + 1:])
            if level == 0 or not isinstance(self.enclosing[level - 1][0][self.enclosing[level - 1][1]], cst.With):
                break
        return before, after

    # --- values carried across iterations ------------------------------------------------------

    def carried(self, name: str) -> Optional[Assignment]:
        """The update through which `name` carries a value it computed into the next iteration.

        `loss += f(x)` and `h = model(x, h)` read the value the previous
        iteration left, when some path from the top of the iteration reaches
        them without assigning `name` afresh (a reset under a narrower `if`,
        `if i % n == 0: loss = 0`, leaves the value carried between resets)
        and the previous iteration did leave one of its own updates (not just
        a reset at its end). The loop's own target is bound at the top of
        every iteration: never carried.
        """
        return self._remember(("carried", name), lambda: self._carried(name))

    def _carried(self, name: str) -> Optional[Assignment]:
        updates = [a for a in self.assignments if a.target == name and a.depth == 0 and a.reads_target]
        if not updates:
            return None
        if not any(d.reads_itself for d in self.iteration.carried_out(name)):
            return None
        for update in updates:
            if self.iteration.carried(update.point[0], name):
                return update
        return None

    def accumulator(self, name: str) -> Optional[Assignment]:
        """`name += term` / `name = name + term` carried across iterations."""
        first = self.carried(name)
        if first is None:
            return None
        if first.operator == "+=":
            return first
        value = first.value
        if first.operator == "=" and isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
            if name in (dotted_name(value.left), dotted_name(value.right)):
                return first
        return None

    def fresh_definitions(self, name: str) -> FrozenSet[int]:
        """Nodes where `name` gets a value that does not carry its old graph: a re-initialisation, a
        detach (also in place), `.item()`, `del`; and the branches where it is known to be `None`
        (`if h is not None: h = h.detach()` has one, with nothing to detach)."""
        return self._remember(("fresh", name), lambda: self._fresh_definitions(name))

    def _fresh_definitions(self, name: str) -> FrozenSet[int]:
        nodes = set(self.flow.graph.known_none(name) & self.iteration.members)
        for node in self.iteration.members:
            for definition in self.flow.graph.nodes[node].definitions:
                if definition.name != name:
                    continue
                if not definition.reads_itself or graph.cuts(definition, self.names):
                    nodes.add(node)
        return frozenset(nodes)

    def backward_on_accumulator(self, backward: BackwardSite) -> Optional[Assignment]:
        """The `loss += term` whose running sum `backward` backpropagates again in a later iteration.

        None when every path from the backward back to the sum assigns it
        afresh first (`loss = 0` right after it, at the end of a window).
        """
        name = backward.loss_name
        if name is None:
            return None
        accumulation = self.accumulator(name)
        if accumulation is None or not self.reaches(backward, accumulation, self.fresh_definitions(name)):
            return None
        return accumulation

    def feeding_names(self, expression: cst.BaseExpression, where: Where, limit: int = 40) -> Set[str]:
        """Names whose values flow into `expression` through this iteration's assignments (not the names a
        comprehension in them binds: `h` in `tuple(h.detach() for h in hidden)` is not the loop's `h`)."""
        return self.flow_names(expression, where, scopes.free_names, limit)

    def flow_names(self, expression: cst.BaseExpression, where: Where, read, limit: int = 40) -> Set[str]:
        """The names `read(expression)` gives, followed back through the definitions that reach them."""
        seen: Set[str] = set()
        pending = [(name, self._point(where)[0]) for name in read(expression)]
        while pending and len(seen) < limit:
            name, at = pending.pop()
            if name in seen:
                continue
            seen.add(name)
            for definition in self.iteration.reaching(at, name):
                if definition.kind != "start" and definition.value is not None:
                    pending.extend((n, definition.node) for n in read(definition.value))
        return seen

    def origin(self, expression: cst.BaseExpression, use: Site, names: ModuleNames) -> LossOrigin:
        """Trace a loss expression used at `use` back through the loop body to its criterion (for a site
        a called function runs, through that function's body)."""
        if use.via is not None and use.via.elsewhere is None:
            passed = use.via.passed(expression)
            if passed is not None:  # the function backpropagates the loss the loop's call passes it
                return OriginTracer(self, names).trace(passed, use.point[0])
            scope = Scope(use.via.function, use.via.flow, self.functions)
            return OriginTracer(scope, names).trace(expression, use.via.node)
        # A site in another file has the loss the loop's call passes it (`training.calls.Via.passed`).
        return OriginTracer(self, names).trace(expression, use.point[0])

    def divisions(self, expression: cst.BaseExpression, use: Site) -> List[Division]:
        """Where the value `expression` has at `use` was divided on its way there, on any path through
        the iteration: `loss / n` in the expression, `loss = loss / n` or `loss /= n` before it."""
        finder = DivisionFinder(lambda name, node: self.reaching(name, node),
                                lambda node: self.flow.graph.nodes[node].line)
        return finder.find(expression, use.point[0])

    def same_count(self, a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
        """`a` and `b` are the same count: the same name (`args.accum`), or the same number once names
        are replaced by their value before the loop (or the file's one binding of them)."""
        if a.deep_equals(b) or (dotted_name(a) is not None and dotted_name(a) == dotted_name(b)):
            return True
        first, second = self.count_value(a), self.count_value(b)
        return first is not None and first == second

    def count_value(self, node: cst.BaseExpression, depth: int = 0) -> Optional[int]:
        """The number a count stands for: a literal, or a name whose value before the loop gives one."""
        value = int_value(node)
        name = dotted_name(node)
        if value is None and name is not None and depth < 3:
            known = self.known_value(name)
            return self.count_value(known, depth + 1) if known is not None else None
        return value

    def count_values(self, node: cst.BaseExpression) -> Optional[FrozenSet[int]]:
        """Every number a count may stand for: its one value (`count_value`), or, for a parameter of the
        loop's function, what that function is run with (`parameter_values`). None when any is unknown."""
        value = self.count_value(node)
        if value is not None:
            return frozenset({value})
        if not isinstance(node, cst.Name) or self.function is None or self.names is None:
            return None
        definitions = self.flow.entering(self.iteration.region, node.value)
        if not definitions or any(definition.kind != "parameter" for definition in definitions):
            return None
        return self._remember(("parameter-values", node.value),
                              lambda: self.parameter_values(self.function, node.value, 0))

    def parameter_values(self, function: cst.FunctionDef, parameter: str, depth: int) -> Optional[FrozenSet[int]]:
        """The numbers `function`'s `parameter` is run with: those pytest lists for it
        (`@pytest.mark.parametrize("n", [1, 10])`), and what each place the file runs the function passes
        (`train(accum=4)`, `init_distributed(dp=2)(train)(accum=accum)`, `partial(train, accum=4)()`), each
        read where that call is: a number, a module constant, a parameter of the calling function (its own
        values, in turn). None when any is unknown, or nothing runs the function."""
        if self.names is None or depth > 3:
            return None
        numbers: Set[int] = set()
        listed = frameworks.parametrized_values(function, parameter, self.names)
        for value in listed or ():
            known = self._number_at(value, None, depth)
            if known is None:
                return None
            numbers |= known
        passings = self.functions.passings(function) if self.functions is not None else None
        if passings is None:
            return frozenset(numbers) if listed is not None and numbers else None
        if listed is None and not passings:
            return None
        for passing in passings:
            passed, defaulted = passing.argument(function, parameter)
            caller = passing.caller
            if defaulted:
                passed, caller = default_of(function, parameter), None  # a default is read where the `def` is
            known = self._number_at(passed, caller, depth) if passed is not None else None
            if known is None:
                return None
            numbers |= known
        return frozenset(numbers) if numbers else None

    def _number_at(self, value: cst.BaseExpression, caller: Optional[cst.FunctionDef],
                   depth: int) -> Optional[FrozenSet[int]]:
        """The numbers `value` stands for in `caller` (None: the module's top level)."""
        number = int_value(value)
        if number is not None:
            return frozenset({number})
        if not isinstance(value, cst.Name) or self.names is None:
            return None
        if caller is not None and self.functions is not None and self.functions.rebinds(caller, value.value):
            return None  # a value the calling function computes
        if caller is not None and value.value in parameter_names(caller):
            return self.parameter_values(caller, value.value, depth + 1)
        bound = self.names.values_of(value.value)
        number = int_value(bound[0]) if len(bound) == 1 else None
        return frozenset({number}) if number is not None else None

    def builds_graph(self, value: cst.BaseExpression, names: ModuleNames) -> bool:
        return graph.builds_graph(value, names, self.value_before_loop)

    def graph_before_loop(self, name: str) -> str:
        """Whether the value `name` has when the loop starts carries an autograd graph: `graph.YES`
        (`features = backbone(x)` before the loop), `graph.NO` (`torch.zeros(n)`, a number, a detached
        value, a batch from an enclosing loop's target, a module) or `graph.UNKNOWN` (a parameter, an
        attribute set elsewhere from one, a name the file does not bind)."""
        return self._remember(("graph-before", name),
                              lambda: self._graph_of(self.flow.entering(self.iteration.region, name), name, 0))

    def _graph_of(self, definitions: List[Definition], name: str, depth: int,
                  flow: Optional[FunctionFlow] = None) -> str:
        """The graph state of `name` given the definitions of it that reach, in the loop's function or, with
        `flow`, in a function of the file it called to get the value."""
        if depth > 4:
            return graph.UNKNOWN
        own = flow is None
        flow = flow or self.flow
        if own and self.holds_module(name):
            return graph.NO  # called, or its `.parameters()` read: a module or a function, not a tensor
        if own and name in self._optimized_tensors():
            return graph.NO  # a torch optimizer takes leaves only ("can't optimize a non-leaf Tensor")
        if not definitions:
            return self._graph_bound_elsewhere(name)
        states = []
        for definition in definitions:
            if definition.kind in ("target", "del") or graph.cuts(definition, self.names):
                states.append(graph.NO)  # a batch from a loop's iterable, an import, a class; detached
            elif definition.kind == "parameter":
                states.append(self._parameter_graph(name) if own else
                              graph.NO if name in ("self", "cls") else graph.UNKNOWN)
            elif definition.kind == "assign" and self.names is not None:
                at = definition.node
                if _grad_off(flow.graph.nodes[at].contexts, self.names):
                    states.append(graph.NO)  # computed under `torch.no_grad()`
                    continue
                passed = self.handed_back(definition) if own else None
                if passed is not None:  # `model, preds = forward(model, x)`: the very object passed
                    states.append(graph.graph_state(
                        passed, self.names, lambda other, at=at: self._graph_of(flow.reaching(at, other), other,
                                                                                 depth + 1, flow)))
                    continue
                returned = self._returned_graph(definition, depth) if definition.unpacked else None
                states.append(returned if returned is not None else graph.graph_state(
                    definition.value, self.names,
                    lambda other, at=at: self._graph_of(flow.reaching(at, other), other, depth + 1, flow)))
            else:
                states.append(graph.UNKNOWN)
        return graph.combine(states)

    def _returned_graph(self, definition: Definition, depth: int) -> Optional[str]:
        """`s, a, r = self.make_batch()`: the graph state of that slot of what the function returns."""
        if not isinstance(definition.value, cst.Call) or not definition.position:
            return None
        return self.returned_graph(definition.value, definition.position, depth)

    def handed_back(self, definition: Optional[Definition]) -> Optional[cst.BaseExpression]:
        """The argument a call hands back unchanged in the place `definition` takes of its result: `model` for
        `model, preds, loss = contrastive_forward(model, cfg, inputs)` when every `return` of that function (of
        this file, or of another file of the project) gives its parameter `model`, never rebound, there. The
        name then holds the very object passed, with its graph state; None when the code does not show that."""
        if definition is None:
            return None
        return self._remember(("handed back", id(definition)), lambda: self._handed_back(definition))

    def _handed_back(self, definition: Definition) -> Optional[cst.BaseExpression]:
        call = definition.value
        if definition.kind != "assign" or definition.position is None or not isinstance(call, cst.Call) \
                or not any(isinstance(arg.value, (cst.Name, cst.Attribute)) for arg in call.args):
            return None
        found = self.called_function(call)
        if found is None:
            return None
        function, functions = found
        returns = functions.returns(function)
        flow = functions.flow(function) if returns else None
        parameters = set()
        for returned, node in returns:
            part = slot_of(returned, definition.position)
            if not isinstance(part, cst.Name):
                return None
            reaching = flow.reaching(node, part.value)
            if not reaching or any(d.kind != "parameter" for d in reaching):
                return None  # rebound on some path: `h = cell(x, h)` before `return h`
            parameters.add(part.value)
        if len(parameters) != 1:
            return None
        return roles.argument_for(call, function, parameters.pop())

    def backpropagated_result(self, definition: Optional[Definition]) -> bool:
        """Whether `definition` takes, from the result of a call in the loop, the very tensor the called function
        backpropagated: `loss, acc = train_step(batch)` where `train_step` runs `loss.backward()` and every
        `return` gives that `loss` at that place, with no other binding of it reaching the `return`. A tensor
        that was backpropagated is attached to a graph, whatever computed it (`sum(... for z in chunks)`)."""
        if definition is None or definition.kind != "assign" or definition.position is None \
                or not isinstance(definition.value, cst.Call):
            return False
        return self._remember(("backpropagated result", id(definition)),
                              lambda: self._backpropagated_result(definition))

    def _backpropagated_result(self, definition: Definition) -> bool:
        call = definition.value
        for backward in self.backwards:
            via = backward.via
            loss = backward.loss
            if via is None or via.call is not call or not via.direct or not isinstance(loss, cst.Name):
                continue
            returns = returned_values(via.flow)
            backpropagated = set(map(id, via.flow.reaching(via.node, loss.value)))
            if returns and backpropagated and all(
                    isinstance(part, cst.Name) and part.value == loss.value
                    and {id(each) for each in via.flow.reaching(node, loss.value)} <= backpropagated
                    for returned, node in returns for part in (slot_of(returned, definition.position),)):
                return True
        return False

    def called_function(self, call: cst.Call) -> Optional[Tuple[cst.FunctionDef, Functions]]:
        """The function `call` runs, of this file or of another file of the project, with its file's functions."""
        if self.functions is not None:
            function = self.functions.callee(call, self.function) or self.functions.by_name(dotted_name(call.func) or "")
            if function is not None:
                return function, self.functions
        project = self.names.project if self.names is not None else None
        callee = dotted_name(call.func)
        target = self.names.imported(callee) if project is not None and callee is not None else None
        found = project.read_definition(target) if project is not None else None
        if found is None or not isinstance(found[1], cst.FunctionDef):
            return None
        module, function = found
        return function, module.functions

    def fed_back_graph(self, update: Assignment) -> Optional[str]:
        """Whether the value `update` (`h = producer(x, h)`) gives its name carries an autograd graph, read in the
        code of every function the producer may run (`Functions.run_by`, in this file or another of the
        project): the slot it takes of what they return, followed back through each function's own definitions
        (`_returned_state`). The parameter the call hands the name itself holds the name's value from before the
        loop or from an earlier iteration, which is this very value: where nothing else brings a graph in, none
        ever enters (`moving_baseline` built under `no_grad()` from `torch.zeros(...)`, blended with the
        `in_baseline` handed back in). None where the producer's code is not shown."""
        call, definition = update.value, update.definition
        if self.functions is None or self.names is None or not isinstance(call, cst.Call) or definition is None:
            return None
        slot = definition.position if definition.unpacked else ()
        if slot is None or (definition.unpacked and not slot):
            return None  # behind a starred target
        run = self.functions.run_by(call, self.function)
        if not run:  # `model(x, mems)`: the `forward` of the project classes the object is built from
            forwards = model_forwards(call, self.names, self.functions, self.function)
            run = [(forward.functions, forward.function) for forward in forwards] if forwards else None
        if not run:
            return None
        before = self.graph_before_loop(update.target)
        states = []
        for functions, function in run:
            carried = {parameter for parameter in parameter_names(function)
                       if dotted_name(argument_for(call, function, parameter) or cst.Name("_")) == update.target}
            states.append(_returned_state(functions, function, slot, carried, before))
        return graph.combine(states)

    def returned_graph(self, call: cst.Call, slot: Tuple[int, ...] = (), depth: int = 0) -> Optional[str]:
        """The graph state of what a function of this file returns (the `slot` an unpacking takes), read in its
        own flow: `artist_works()` returning `torch.from_numpy(...)` carries none; None where the call or the
        slot cannot be followed."""
        function = self.functions.callee(call, self.function) if self.functions is not None else None
        if function is None:
            return None
        flow = self.functions.flow(function)
        states = []
        for returned, node in self.functions.returns(function):
            part = slot_of(returned, slot)
            if part is None:
                return None
            states.append(graph.graph_state(
                part, self.names,
                lambda other, node=node: self._graph_of(flow.reaching(node, other), other, depth + 1, flow)))
        return graph.combine(states) if states else None

    def graph_brought_in(self, expression: cst.BaseExpression, where: Where,
                         stops: FrozenSet[str] = frozenset()) -> Optional[str]:
        """The first name through which a value from before the loop that has a graph, or whose graph state
        the code does not show, flows into `expression` at `where` (followed back through this iteration's
        definitions); None when everything it is computed from is made in this iteration or carries no
        graph. The loop's own target is fresh data each iteration; `stops` are names past which nothing is
        followed (the `inputs` a `torch.autograd.grad` call stops at)."""
        if self.names is None:
            return None
        culprits: List[str] = []
        seen: Dict[Tuple[str, int], str] = {}

        def at(node: int) -> Callable[[str], str]:
            return lambda name: state_of(name, node)

        def state_of(name: str, node: int) -> str:
            key = (name, node)
            if key in seen:
                return seen[key]
            seen[key] = graph.NO  # a cycle through a nested loop adds nothing new
            states = []
            if name in stops or self.holds_module(name):
                states.append(graph.NO)
            else:
                for definition in self.iteration.reaching(node, name):
                    if definition.kind == "start":
                        before = self._graph_at_iteration_start(name, at)
                        if before != graph.NO and not culprits:
                            culprits.append(name)
                        states.append(before)
                    elif (definition.kind == "target" and definition.syntax is self.node) or definition.kind in (
                            "del", "effect") or graph.cuts(definition, self.names):
                        states.append(graph.NO)
                    elif definition.kind == "assign" and self.handed_back(definition) is not None:
                        # `model, preds = forward(model, x)`: the very object passed
                        states.append(graph.graph_state(self.handed_back(definition), self.names,
                                                        at(definition.node), inherited=True))
                    elif definition.kind == "assign" or definition.kind == "target":
                        # A nested loop's target holds elements of its iterable; a function of the file called
                        # without inputs (`artist_works()`) is read in its own body.
                        returned = None
                        if isinstance(definition.value, cst.Call) and not definition.value.args:
                            returned = self.returned_graph(definition.value, definition.position or ())
                        states.append(returned if returned is not None else graph.graph_state(
                            definition.value, self.names, at(definition.node), inherited=True))
                    else:  # `x += y`: the value before it, and what is added
                        states.append(graph.combine((
                            graph.graph_state(definition.value, self.names, at(definition.node), inherited=True),
                            state_of(name, definition.node) if definition.node != node else graph.UNKNOWN)))
            seen[key] = graph.combine(states)
            return seen[key]

        state = graph.graph_state(expression, self.names, at(self._point(where)[0]), inherited=True)
        if state == graph.NO:
            return None
        return culprits[0] if culprits else dotted_name(expression) or "?"

    def graph_nodes(self, expression: cst.BaseExpression, where: Where) -> GraphNodes:
        """The graph nodes `expression` at `where` is computed from: the statements of this iteration whose
        values carry a graph into it (a forward pass, a tensor computed from one), followed back through
        their inputs; a detach (`.detach()`, `.data`, `.item()`), a value computed under `torch.no_grad()`
        and the loop's own batch cut the walk. Two backwards whose nodes are disjoint go through separate
        graphs: `critic(state)` and `actor(state)`, or two calls of one module (each call makes new nodes).
        `unknown` holds the names through which a graph the code does not show may enter: a value from before
        the loop whose graph state is not NO (a parameter, an attribute set elsewhere); `opaque` those whose
        value the walk cannot follow: a container filled in place (`outs.append(model(x))`), a binding it
        cannot read."""
        return self._remember(("graph nodes", id(expression), self._point(where)),
                              lambda: self._graph_nodes(expression, self._point(where)[0]))

    def _graph_nodes(self, expression: cst.BaseExpression, at: int) -> GraphNodes:
        if self.names is None:
            return GraphNodes(frozenset(), frozenset(), frozenset({"?"}))

        def before(name: str, definition: Optional[Definition]) -> str:
            return self.graph_before_loop(name)

        bound = self._remember(("bound in loop",), lambda: nodes.bound_names(self.node))
        region = Region(self.iteration.reaching, before, self.names, self.holds_module, self._filled_in_place(),
                        lambda node: _grad_off(self.flow.graph.nodes[node].contexts, self.names),
                        self._remember(("handed in loop",), lambda: nodes.handed_values(self.node)), self.node,
                        lambda call: self._reads_any(call, bound))
        return nodes.graph_nodes(expression, at, region)

    def _reads_any(self, call: cst.Call, bound: FrozenSet[str]) -> bool:
        """`call` runs a function of the project whose body reads one of `bound` (`self.fake`, set in the loop)."""
        found = self.called_function(call)
        if found is None:
            return False
        function = found[0]
        return self._remember(("reads", id(function), id(bound)), lambda: bool(nodes.outer_reads(function) & bound))

    def call_graph_nodes(self, via: Via, expression: cst.BaseExpression, node: int) -> GraphNodes:
        """`graph_nodes` for a site a function of this file runs (`via`): the nodes of one run of that function
        that `expression` at its control-flow `node` is computed from. Its parameters (but `self` and those
        with a literal default) are unknown: what the loop passes."""
        return self._remember(("call graph nodes", id(via.function), id(expression), node),
                              lambda: self._call_graph_nodes(via, expression, node))

    def _call_graph_nodes(self, via: Via, expression: cst.BaseExpression, node: int) -> GraphNodes:
        if self.names is None or via.elsewhere is not None:
            return GraphNodes(frozenset(), frozenset(), frozenset({"?"}))
        called = self._remember(("called names", id(via.function)), lambda: frozenset(
            name for part in preorder(via.function) if isinstance(part, cst.Call)
            for name in (dotted_name(part.func),) if name is not None))

        def before(name: str, definition: Optional[Definition]) -> str:
            if definition is None:
                return self._graph_bound_elsewhere(name)
            if definition.kind != "parameter":
                return graph.UNKNOWN
            state = self._parameter_graph(name, via.function)
            return state if state == graph.NO else self._passed_graph(via, name)

        bound = self._remember(("bound in", id(via.function)), lambda: nodes.bound_names(via.function.body))
        region = Region(via.flow.reaching, before, self.names, lambda name: name in called or self.holds_module(name),
                        self._remember(("filled in", id(via.function)), lambda: nodes.filled_in_place(via.function)),
                        lambda at: _grad_off(via.flow.graph.nodes[at].contexts, self.names),
                        self._remember(("handed in", id(via.function)), lambda: nodes.handed_values(via.function)),
                        None, lambda call: call is not via.call and self._reads_any(call, bound))
        return nodes.graph_nodes(expression, node, region)

    def _filled_in_place(self) -> FrozenSet[str]:
        return self._remember(("filled in place",), lambda: nodes.filled_in_place(self.node))

    def _graph_at_iteration_start(self, name: str, at: Callable[[int], Callable[[str], str]]) -> str:
        """The graph state of the value `name` holds when an iteration starts: the one it has before the loop
        (`graph_before_loop`), or, for a local of the loop's function that nothing before the loop binds
        (`ref`, assigned only under `if multispeaker:` in the body), the one an earlier iteration left (there
        is none on the first): what the body assigns it, NO when computed under `torch.no_grad()`. `at(node)`
        gives the states of the names read at a node of the iteration."""
        if "." in name or self.function is None or self.flow.entering(self.iteration.region, name) \
                or not any(d.name == name for d in self.flow.graph.definitions) \
                or self._remember(("declares outer names",), lambda: any(
                    isinstance(part, (cst.Global, cst.Nonlocal)) for part in preorder(self.function))):
            return self.graph_before_loop(name)
        states = []
        for definition in self.iteration.carried_out(name):
            if _grad_off(self.flow.graph.nodes[definition.node].contexts, self.names) \
                    or graph.cuts(definition, self.names) \
                    or (definition.kind == "target" and definition.syntax is self.node):
                states.append(graph.NO)
            elif definition.kind == "assign" and not definition.unpacked and definition.value is not None:
                # its own graph, not only one it inherits: a forward of the earlier iteration made it
                states.append(graph.graph_state(definition.value, self.names, at(definition.node)))
            else:
                states.append(graph.UNKNOWN)
        return graph.combine(states) if states else graph.UNKNOWN

    def _graph_bound_elsewhere(self, name: str) -> str:
        """A name this function does not bind (`self.target`, a global): what the file binds to it, when
        those values show their state by themselves (`self.weight = 1e-4`, not `self.target = target`)."""
        values = self.names.values_of(name) if self.names is not None else []
        if not values:
            return graph.UNKNOWN
        return graph.combine(graph.graph_state(value, self.names, lambda other: graph.UNKNOWN) for value in values)

    def _passed_graph(self, via: Via, parameter: str) -> str:
        """The graph state of what the loop's call passes for a parameter of the function it runs: NO for a name
        of the iteration that carries no graph, as far as the code shows (the loop's own batch, `batch` of
        `for batch in batches:` handed to `self.process_batch(batch)`, or a value computed from it outside any
        forward); UNKNOWN otherwise."""
        if not via.direct or via.elsewhere is not None:
            return graph.UNKNOWN
        passed = argument_for(via.call, via.function, parameter, bound=True if via.bound else None)
        if passed is None or dotted_name(passed) is None:
            return graph.UNKNOWN
        at = self._call_node(via.call)
        if at is None:
            return graph.UNKNOWN
        found = self.graph_nodes(passed, at)
        if found.nodes or not found.shown:
            return graph.UNKNOWN
        # `for out in outputs: self.fit_head(out, y)` with `outputs` computed before the loop: the loop's target
        # holds a graph the next call goes through again (what `_graph_from_before` of TL005 reads in the loop)
        for name in self.flow_names(passed, at, graph.value_names):
            if all(d.kind == "start" for d in self.iteration.reaching(at, name)) \
                    and self.graph_before_loop(name) == graph.YES:
                return graph.UNKNOWN
        return graph.NO

    def _call_node(self, call: cst.Call) -> Optional[int]:
        """The control-flow node of the iteration that makes `call`."""
        def compute() -> Optional[int]:
            for index in sorted(self.iteration.region.body):
                node = self.flow.graph.nodes[index]
                if any(part is call for expression in node.expressions for part in preorder(expression)):
                    return index
            return None
        return self._remember(("call node", id(call)), compute)

    def _parameter_graph(self, name: str, function: Optional[cst.FunctionDef] = None) -> str:
        """`self`, and a hyperparameter with a literal default (`beta=0.9`, `device="cpu"`), carry no
        graph; any other parameter is whatever the caller passes. `function`: one the loop calls (a method
        when its first parameter is `self`), else the loop's own."""
        method = function is None and self.class_def is not None
        function = function or self.function
        if function is None:
            return graph.UNKNOWN
        params = function.params
        for index, param in enumerate(tuple(params.params) + tuple(params.kwonly_params)):
            if param.name.value != name:
                continue
            if index == 0 and name in ("self", "cls") and (method or function is not self.function):
                return graph.NO
            default = param.default
            literal = (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)
            if isinstance(default, literal) or (isinstance(default, cst.UnaryOperation)
                                                and isinstance(default.expression, literal)):
                return graph.NO
        return graph.UNKNOWN

    def holds_module(self, name: str) -> bool:
        """`name` holds a module (or a function), not a tensor: the loop's function calls it (`model(x)`) or reads
        its parameters (`Adam(model.parameters())`, `clip_grad_norm_(model.parameters(), 1.0)`)."""
        return name in self._callables()

    def _optimized_tensors(self) -> FrozenSet[str]:
        """Names listed in the parameters of a torch optimizer the loop's function builds: `image` in
        `Adam([image])`."""
        def compute() -> FrozenSet[str]:
            found: Set[str] = set()
            for part in preorder(self.flow.graph.owner):
                if isinstance(part, cst.Call) and self.names is not None and \
                        self.names.is_optimizer_class(self.names.callee(part) or ""):
                    params = positional(part, 0) or keyword(part, "params")
                    if isinstance(params, (cst.List, cst.Tuple)):
                        found |= {dotted_name(e.value) for e in params.elements if dotted_name(e.value)}
            return frozenset(found)
        return self._remember(("optimized tensors",), compute)

    def _callables(self) -> FrozenSet[str]:
        """Names the loop's function (or module) calls, or reads the parameters of: modules and functions."""
        def compute() -> FrozenSet[str]:
            found: Set[str] = set()
            for part in preorder(self.flow.graph.owner):
                if not isinstance(part, cst.Call):
                    continue
                func = part.func
                if isinstance(func, cst.Attribute) and func.attr.value in ("parameters", "named_parameters"):
                    func = func.value
                name = dotted_name(func)
                if name is not None:
                    found.add(name)
            return frozenset(found)
        return self._remember(("callables",), compute)

    # --- steps and resets -------------------------------------------------------------------

    def resets_affecting(self, step: StepSite) -> List[ResetSite]:
        """Resets that clear the gradients `step` applies (its optimizer's, or its model's)."""
        models = dict(self.optimizer_models).get(step.receiver, frozenset())
        return self._resets_clearing(step, models, len(self.optimizer_names) == 1)

    def _resets_clearing(self, step: StepSite, models: FrozenSet[str], single_optimizer: bool) -> List[ResetSite]:
        affecting = []
        for reset in self.resets:
            if reset.kind == "helper":
                # `fast_zero_grad(model)`: a helper of this file that resets; whose gradients it reaches is
                # clear when it is handed this optimizer or its model, or when only one optimizer steps.
                passed = {dotted_name(arg.value) for arg in getattr(reset.node, "args", ())}
                if single_optimizer or step.receiver in passed or any(
                    roles.same_module(name, model) for name in passed if name for model in models
                ):
                    affecting.append(reset)
                continue
            if reset.kind not in ("zero_grad", "parameters") or (reset.kind == "parameters" and not reset.target):
                continue  # `delta.grad.zero_()` on a tensor of its own; a helper that resets only sometimes; gradients
                # replaced (`p.grad = g`): the step applies the new ones
            if reset.target == step.receiver or any(roles.same_module(reset.target, model) for model in models):
                affecting.append(reset)
            elif not models and single_optimizer and reset.target not in self.optimizer_names:
                affecting.append(reset)
        return affecting

    def modules_left_unreset(self, optimizer: str) -> Optional[FrozenSet[str]]:
        """The modules `optimizer` holds parameters of that no reset in the loop clears, when its construction
        shows all it holds: resets of other optimizers and of modules count for the modules they hold
        (`info_optimizer = Adam(itertools.chain(G.parameters(), D.parameters()))` is cleared by
        `D_optimizer.zero_grad()` over D's parameters and `G_optimizer.zero_grad()` over G's together; with
        only the first, `G` is left). Empty when every one is cleared (by one of the constructions the file
        binds to it, if several); None when what it holds is not all known (`Adam(list(model.parameters()) +
        [log_alpha])`, a factory, a parameter of the function)."""
        return self._remember(("unreset", optimizer), lambda: self._modules_left_unreset(optimizer))

    def _modules_left_unreset(self, optimizer: str) -> Optional[FrozenSet[str]]:
        holdings = roles.optimizer_parameters(optimizer, self.names) if self.names is not None else None
        if not holdings or any(not held.complete or not held.owners for held in holdings):
            return None
        cleared: Set[str] = set()
        for reset in self.resets:
            if reset.kind not in ("zero_grad", "parameters", "assigned") or not reset.target:
                continue
            if reset.target == optimizer:
                return frozenset()
            others = roles.optimizer_parameters(reset.target, self.names)
            if others is not None:  # `D_optimizer.zero_grad()`: every module it holds whole
                cleared.update(module for held in others for module in held.whole)
            elif reset.target not in self.optimizer_names:  # an optimizer whose parameters the code does not show
                cleared.add(reset.target)  # `netD.zero_grad()`, `for p in netD.parameters(): p.grad = None`
        left = [frozenset(owner for owner in held.owners
                          if not any(roles.covers(module, owner, self.names) for module in cleared))
                for held in holdings]
        return frozenset() if not all(left) else frozenset().union(*left)

    def resets_wiping(self, step: StepSite) -> List[ResetSite]:
        """Resets that run after a backward and before `step` on every path to it, with no backward
        between them and the step: the step applies zeros."""
        backwards = frozenset(b.point[0] for b in self.loop_backwards)
        found = []
        for reset in self.resets_affecting(step):
            if reset.depth != 0 or not self.dominates(reset, step):
                continue
            if not any(self.precedes(backward, reset) for backward in self.loop_backwards):
                continue
            if self.reaches(reset, step, backwards, around=False) and not self._backward_between(reset, step):
                found.append(reset)
        return found

    def _backward_between(self, a: Site, b: Site) -> bool:
        """A backward that a call of the loop runs after `a` and before `b`: one call running all three (SAC's
        `agent.update_parameters()` resets, backpropagates and steps each of its optimizers in turn), or the call
        that runs `a` running a backward after it, or the one that runs `b` running one before it (three step
        helpers called in turn, each resetting, backpropagating and stepping: the second one's reset comes after
        the first one's backward, and the third one's step after its own backward)."""
        together = self._in_one_call(a, b) is not None
        for backward in self.loop_backwards:
            after = self._in_one_call(a, backward)  # negative: `a` runs first
            before = self._in_one_call(backward, b)  # negative: the backward runs first
            if together:
                if after is not None and after < 0 and before < 0:
                    return True
            elif (after is not None and after < 0) or (before is not None and before < 0):
                return True
        return False

    def learning_rate_read_after(self, step: StepSite, scheduler: str) -> bool:
        """Something that may run after `step` in the same iteration reads the learning rate (`print(
        optimizer.param_groups[0]["lr"])`, `scheduler.get_last_lr()`, a helper of this file doing so, the
        scheduler handed to a call): a scheduler moved to just after the step would change what it reads."""
        if self.names is None:
            return True
        for index in self.iteration.region.body:
            node = self.flow.graph.nodes[index]
            if node.expressions and self.reaches(step, index, around=False) and any(
                    roles.reads_learning_rate(expression, step.receiver, scheduler, self.names)
                    for expression in node.expressions):
                return True
        return False

    def in_accumulate_context(self, site: Site) -> bool:
        """Inside `with accelerator.accumulate(model):`, where the framework handles the window."""
        return self.accumulate_call(site) is not None

    def accumulate_call(self, site: Site) -> Optional[cst.Call]:
        """The `accelerator.accumulate(model)` among the `with` items around `site`, if any."""
        for item in self.outer_contexts + site.contexts:
            if isinstance(item, cst.Call) and isinstance(item.func, cst.Attribute) and item.func.attr.value == "accumulate":
                return item
        return None

    # --- a window written as this loop ------------------------------------------------------

    @property
    def inner_window(self) -> Optional[InnerWindow]:
        """This loop as an accumulation window of its own (`windows.InnerWindow`): its header counts the
        micro-batches (`for _ in range(grad_accum)`, the slices or chunks of a batch), nothing in it steps the
        optimizer or leaves it early (`break`, `return`), and the statements after it step the optimizer
        once, with no backward or gradient reset between. None otherwise."""
        return self._remember(("inner window",), self._inner_window)

    def _inner_window(self) -> Optional[InnerWindow]:
        node, names = self.node, self.names
        if not isinstance(node, cst.For) or names is None or self.framework is not None or not self.enclosing:
            return None
        count = windows.inner_count(node, names, self.value_before_loop)
        if count is None or self.optimizer_names or _leaves_early(block_of(node)):
            return None
        if count.count is not None:
            count = dataclasses.replace(count, value=self.count_value(count.count))
            if count.value == 1 or any(self.assigned_in_loop(name) for name in iter_names(count.count)):
                return None  # one micro-batch a step; or a count the loop changes as it runs
        found = self._step_after()
        if found is None:
            return None
        steps, between, alone, rescaled = found
        if any(step.receiver == steps[0].receiver for step in self.steps):
            return None  # the optimizer also steps in the loop (through a name this loop does not build)
        models = roles.optimized_models(steps[0].receiver, names)
        return InnerWindow(count, steps, models, between, alone, rescaled)

    def read_after_loop(self, name: str) -> bool:
        """Whether `name` is mentioned in the statements after this loop, in its block and the blocks around it
        (an inner window's loss printed after the window: `print(loss.item())`)."""
        for statements, index in self.enclosing:
            for statement in statements[index + 1:]:
                if any(read.split(".", 1)[0] == name for read in iter_names(statement)):
                    return True
        return False

    def window_resets(self, window: InnerWindow) -> List[ResetSite]:
        """The resets of this loop's own body that clear the gradients `window`'s step applies."""
        return [reset for reset in self._resets_clearing(window.step, window.models, True) if reset.depth == 0]

    def repeated_without_reset(self, window: InnerWindow) -> Optional[Loop]:
        """The loop of this function that runs `window` and its step again and again (the innermost one holding
        both) when nothing in it may clear the gradients the step applies: no reset of that optimizer, of a
        model it holds or of any model when those cannot be read, no helper of the file that resets, at any
        depth; and the optimizer is not built in it. None otherwise, or where no loop of this function repeats
        the window (its function may be called once per step by another)."""
        graph = self.flow.graph
        step = window.step.point[0]
        around = [region for region in graph.enclosing_loops(self.iteration.region) if step in region.body]
        if not around:
            return None
        region = min(around, key=lambda region: len(region.body))
        if any(definition.name == window.optimizer for index in region.body
               for definition in graph.nodes[index].definitions):
            return None  # a fresh optimizer for each repetition
        found = SiteCollector(self.names, graph, region, self.flow.iteration(region), self.function,
                              lambda: self.functions).collect()
        for reset in found.resets:
            if reset.kind not in ("zero_grad", "assigned") or reset.target == window.optimizer or not window.models \
                    or (reset.kind == "assigned" and not reset.target):
                return None  # gradients replaced (`p.grad = g`) count as a reset of the parameters the loop walks
            if any(roles.same_module(reset.target, model) for model in window.models):
                return None
        return region.statement

    def assigned_in_loop(self, name: str) -> bool:
        """Something in the loop's body gives `name` a value (or an in-place effect changes it)."""
        return any(definition.name == name for index in self.iteration.region.body
                   for definition in self.flow.graph.nodes[index].definitions)

    def _step_after(self) -> Optional[Tuple[Tuple[StepSite, ...], Tuple[cst.CSTNode, ...], bool, bool]]:
        """(steps, statements before them, the step is a line of the loop's block, gradients rescaled) for the
        optimizer step among the statements after the loop, before any backward, gradient reset, early exit or
        other loop that trains; a step under an `if` counts when every branch of it steps that optimizer. When
        the loop's block ends first, the statements after the `if` or `with` that holds it follow (not those
        after an enclosing loop's body: that is its next iteration)."""
        scan = _AfterLoop(self)
        between: List[cst.CSTNode] = []
        for level in range(len(self.enclosing) - 1, -1, -1):
            statements, index = self.enclosing[level]
            for statement in statements[index + 1:]:
                steps = scan.statement(statement)
                if scan.blocked:
                    return None
                if steps:
                    alone = len(steps) == 1 and steps[0].statement is statement and level == len(self.enclosing) - 1
                    return tuple(steps), tuple(between), alone, scan.rescaled
                between.append(statement)
            if level == 0:
                return None
            parent, position = self.enclosing[level - 1]
            if not isinstance(parent[position], (cst.If, cst.With)):
                return None
        return None

    def step_site_at(self, line: cst.CSTNode, call: cst.Call, receiver: str, via_scaler: bool) -> Optional[StepSite]:
        """A step site for a call of this loop's function outside the loop (its point in the function's flow)."""
        for node in self.flow.graph.nodes:
            if node.line is not line and node.syntax is not line:
                continue
            rank = 0
            for expression in node.expressions:
                for inner in calls_in(expression):
                    rank += 1
                    if inner is call:
                        return StepSite(1_000_000 + node.index, call, line, (), node.contexts, 0, (node.index, rank),
                                        receiver=receiver, via_scaler=via_scaler)
        return None

    # --- the loop's surroundings --------------------------------------------------------

    def value_before_loop(self, name: str) -> Optional[cst.BaseExpression]:
        """The value `name` has when the loop starts, when every path into the loop gives it the same one."""
        return self._remember(("before", name), lambda: self._value_before_loop(name))

    def _value_before_loop(self, name: str) -> Optional[cst.BaseExpression]:
        definitions = self.flow.entering(self.iteration.region, name)
        values = [d.value for d in definitions if d.kind == "assign" and not d.unpacked and d.value is not None]
        if not values or len(values) != len(definitions):
            return None
        first = values[0]
        return first if all(value.deep_equals(first) for value in values[1:]) else None

    def iterable_before_loop(self, name: str) -> Optional[cst.BaseExpression]:
        """The value `name` has when the loop starts, seen through the wrappers that keep an iterable's
        elements: `pbar = enumerate(loader)`, then on some paths `pbar = tqdm(pbar, total=nb)`, is
        `enumerate(loader)` on every path."""
        unwrapped = self._unwrapped_before(self.flow.entering(self.iteration.region, name), name, 0)
        return unwrapped if unwrapped is not None else self.value_before_loop(name)

    def _unwrapped_before(self, definitions: List[Definition], name: str, depth: int) -> Optional[cst.BaseExpression]:
        found: Optional[cst.BaseExpression] = None
        for definition in definitions:
            if definition.kind != "assign" or definition.unpacked or definition.value is None or depth > 3:
                return None
            value = windows.unwrap(definition.value, self.names)
            if isinstance(value, cst.Name) and value.value == name:  # `pbar = tqdm(pbar)`: what it wraps
                value = self._unwrapped_before(self.flow.reaching(definition.node, name), name, depth + 1)
            if value is None or (found is not None and not found.deep_equals(value)):
                return None
            found = value
        return found

    def fresh_value(self, name: str) -> Optional[cst.BaseExpression]:
        """The value `name` has when the loop starts on a fresh run: the one every path into the loop gives it,
        or, where a resume restores it on other paths (`global_step = checkpoint["step"]` under
        `if args.resume:`), the one constant the rest give it. A fresh run is the one a user runs first, and a
        resumed run continues its count. Only the loop's first start counts: `global_step += 1` at the end of
        an epoch loop around it continues the count into later epochs. An attribute the method does not set
        before the loop (`self.global_step`) has the value its class gives it (`_attribute_history`). Two
        different constants (`start = 1` on some path) leave it unknown."""
        return self._fresh_start(name)[0]

    def restored_before_loop(self, name: str) -> bool:
        """A resume may give `name` the value it starts the loop with (`fresh_value` is a fresh run's)."""
        return self._fresh_start(name)[1]

    def _fresh_start(self, name: str) -> Tuple[Optional[cst.BaseExpression], bool]:
        return self._remember(("fresh", name), lambda: self._first_start(name))

    def _first_start(self, name: str) -> Tuple[Optional[cst.BaseExpression], bool]:
        definitions, unassigned = self.flow.first_entering(self.iteration.region, name)
        history = _attribute_history(self, name)
        if history is None:
            return None, False
        start, restorers = history
        values: List[cst.BaseExpression] = []
        if unassigned:
            if start is None:
                return None, False
            values.append(start)
        # A method that writes it back from saved state, called in the method before the loop: on some path
        # only (`if cfg.resume: self.load_checkpoint()`), or every run is a resumed one. In the loop: unknown.
        restoring = [node.index for node in self.flow.graph.nodes
                     if any(_calls_own_method(expression, restorers) for expression in node.expressions)] \
            if restorers else []
        if any(index in self.iteration.region.body for index in restoring) or (
                restoring and not self.flow.first_reached_avoiding(self.iteration.region, frozenset(restoring))):
            return None, False
        if any(d.kind != "assign" or d.value is None for d in definitions):
            return None, False
        for definition in definitions:
            values += [definition.value] if definition.unpacked else _alternatives(definition.value)
        constants = [value for value in values if int_value(value) is not None]
        if not constants or any(int_value(value) != int_value(constants[0]) for value in constants):
            return None, False
        restored = [value for value in values if int_value(value) is None]
        if not all(_restored(value) for value in restored):
            return None, False
        return constants[0], bool(restored) or bool(restorers)

    def known_value(self, name: str) -> Optional[cst.BaseExpression]:
        """The value `name` has before the loop, else the one value the file binds to it (a module constant)."""
        value = self.value_before_loop(name)
        if value is None and self.names is not None and not self._local_object(name):
            bound = self.names.values_of(name)
            value = bound[0] if len(bound) == 1 else None
        return value

    def _local_object(self, name: str) -> bool:
        """`name` is an attribute of an object the loop's function holds in a name of its own: a parameter
        (`config` of `train_one_epoch(net, config)`) or a local, not the module's name of the same spelling
        (`config.accumulation_steps = 1` at module level says nothing about it). A method's own object
        (`self`) is the one its class's methods set attributes on."""
        root, dot, _ = name.partition(".")
        if not dot or self.function is None:
            return False
        parameters = self.function.params.params
        if self.class_def is not None and parameters and parameters[0].name.value == root:
            return False
        return bool(self.flow.entering(self.iteration.region, root))

    def run_of(self, step: Site, check: AccumulationCheck) -> Optional[Run]:
        """When `step` runs under `check` on a concrete run (`torchlint.training.timeline`)."""
        counter = self.counter(check.counter)
        first = self.first_value(counter, check.read_at(step)) if counter is not None else None
        if first is None or self.names is None:
            return None
        return simulate(check, counter, first, self.names, self.known_value)

    def run_on_steps(self, check: AccumulationCheck, start: int) -> Optional[Run]:
        """The run of a window whose counter starts at `start` and advances only when the step runs; the
        micro-batches are numbered by the loop's own counter (`enumerate(loader)`), when it has one."""
        header = next((c for c in self.counters if c.source != "manual"), None)
        counted = LoopCounter(check.counter or "", start, "manual", None, None,
                              header.iterable if header is not None else None)
        if self.names is None:
            return None
        return simulate(check, counted, start, self.names, self.known_value, on_step=True)

    @property
    def first_body_statement(self) -> Optional[cst.CSTNode]:
        body = self.node.body
        return body.body[0] if isinstance(body, cst.IndentedBlock) and body.body else None

    def statements_after(self) -> Block:
        """The statements that follow the loop in its own block and run there (`executed`)."""
        if not self.enclosing:
            return ()
        statements, index = self.enclosing[-1]
        return executed(statements[index + 1:])

    # --- gradient mode -------------------------------------------------------------------

    def grad_disabled_at(self, site: Site, names: ModuleNames) -> Optional[cst.BaseExpression]:
        """The `no_grad()`/`inference_mode()` context or decorator in force at `site`, if any."""
        decorators = tuple(d.decorator for d in self.function.decorators) if self.function is not None else ()
        disabled = None
        for item in decorators + self.outer_contexts + site.contexts:
            mode = grad_mode(item, names)
            if mode == "off":
                disabled = item
            elif mode == "on":
                disabled = None
        return disabled


def _returned_state(functions: Functions, function: cst.FunctionDef, slot: Tuple[int, ...], carried: Set[str],
                    carried_state: str) -> str:
    """The graph state of the `slot` of what `function` returns, read in its own flow with its file's names:
    `carried`, the parameters the loop hands the state itself back in, have `carried_state`; `self` none;
    any other parameter, a name the function does not bind, a call it cannot read: unknown. A write into an
    element of a name (`buf[i] += r`, `buf[i].copy_(r)`, `mems.append(m)`) outside `no_grad()` brings in what
    it writes. In a module's `forward`, what a layer hands back beside its output (`x, mem = layer(x, mem)`) is
    unknown unless the layer is a torch recurrent module."""
    names = functions.names
    flow = functions.flow(function)
    inside_module = function.name.value == "forward"
    writes: Dict[str, List[Tuple[cst.BaseExpression, int]]] = {}
    for node in flow.graph.nodes:
        if node.syntax is None or _grad_off(node.contexts, names):
            continue
        for target, value in _element_writes(node.syntax):
            writes.setdefault(target, []).append((value, node.index))
    known: Dict[Tuple[str, int], str] = {}

    def state_of(name: str, node: int, depth: int) -> str:
        key = (name, node)
        if key in known:
            return known[key]
        known[key] = graph.NO  # a cycle through a loop of the function adds nothing new
        states = [graph.UNKNOWN] if depth > 16 else []
        definitions = flow.reaching(node, name) if depth <= 16 else []
        if not definitions and depth <= 16:
            states.append(graph.UNKNOWN)  # bound elsewhere: an attribute, a global
        for definition in definitions:
            def earlier(other: str, at: int = definition.node) -> str:
                return state_of(other, at, depth + 1)
            if definition.kind == "parameter":
                states.append(carried_state if name in carried else graph.NO if name in ("self", "cls")
                              else graph.UNKNOWN)
            elif definition.kind == "del" or graph.cuts(definition, names):
                states.append(graph.NO)
            elif definition.kind in ("assign", "augmented"):
                if _grad_off(flow.graph.nodes[definition.node].contexts, names):
                    states.append(graph.NO)  # computed under `torch.no_grad()`
                    continue
                if inside_module and definition.unpacked and definition.position and definition.position[0] > 0 \
                        and isinstance(definition.value, cst.Call) \
                        and not graph.recurrent_module(definition.value, names):
                    # `x, mem = layer(x, mem)` in a model's `forward`: what a layer hands back beside its output
                    # (a cache, a memory) may be detached inside it; a torch recurrent module's state is not.
                    # (Training code calling the model itself, `out, h = model(x, h)`, is what the rule is about.)
                    states.append(graph.UNKNOWN)
                    continue
                states.append(graph.graph_state(definition.value, names, earlier))
                if definition.kind == "augmented":
                    states.append(state_of(name, definition.node, depth + 1))
            else:
                states.append(graph.UNKNOWN)  # a loop's target, an import, a `with` target
        for value, at in writes.get(name, ()):
            states.append(graph.graph_state(value, names, lambda other, at=at: state_of(other, at, depth + 1)))
        known[key] = graph.combine(states)
        return known[key]

    states = []
    for returned, node in functions.returns(function):
        part = slot_of(returned, slot)
        if part is None:
            return graph.UNKNOWN
        states.append(graph.graph_state(part, names, lambda other, node=node: state_of(other, node, 0)))
    return graph.combine(states) if states else graph.UNKNOWN


_FILLS = frozenset({"append", "extend", "insert"})


def _element_writes(syntax: cst.CSTNode) -> Iterator[Tuple[str, cst.BaseExpression]]:
    """The names a statement writes into in place, with what it writes: `buf[i] = v`, `buf[i][1] += v`,
    `buf.add_(v)`, `buf[i].copy_(v)`, and a container's fill: `mems.append(v)`, `mems.extend(vs)`."""
    if isinstance(syntax, (cst.Assign, cst.AugAssign)):
        targets = [target.target for target in syntax.targets] if isinstance(syntax, cst.Assign) else [syntax.target]
        for target in targets:
            if isinstance(target, cst.Subscript):
                while isinstance(target, cst.Subscript):
                    target = target.value
                name = dotted_name(target)
                if name is not None:
                    yield name, syntax.value
    elif isinstance(syntax, cst.Expr) and isinstance(syntax.value, cst.Call):
        func = syntax.value.func
        if isinstance(func, cst.Attribute) and (func.attr.value in _FILLS or (
                func.attr.value.endswith("_") and not func.attr.value.startswith("_"))):
            receiver = func.value
            while isinstance(receiver, cst.Subscript):
                receiver = receiver.value
            name = dotted_name(receiver)
            for arg in syntax.value.args:
                if name is not None:
                    yield name, arg.value


def _grad_off(contexts: Sequence[cst.BaseExpression], names: ModuleNames) -> bool:
    """The innermost of `contexts` that sets the gradient mode turns it off."""
    modes = [mode for mode in (grad_mode(item, names) for item in contexts) if mode is not None]
    return bool(modes) and modes[-1] == "off"


def _argument_for(call: cst.Call, function: cst.FunctionDef, parameter: str) -> Optional[cst.BaseExpression]:
    """What `call` passes for a plain function's `parameter` (`calls.argument_for`); by position only when the
    call unpacks nothing (`*args`, `**kwargs` may fill that slot). None when the default is left to hold."""
    value = argument_for(call, function, parameter, bound=False)
    if value is not None and keyword(call, parameter) is None and any(arg.star for arg in call.args):
        return None
    return value


def _assignment_targets(part: cst.CSTNode) -> List[cst.BaseExpression]:
    if isinstance(part, cst.Assign):
        return [target.target for target in part.targets]
    if isinstance(part, (cst.AugAssign, cst.AnnAssign)):
        return [part.target]
    return []


def grad_mode(item: cst.BaseExpression, names: ModuleNames) -> Optional[str]:
    """"off" for `torch.no_grad()`-like contexts and decorators, "on" for `enable_grad()`, else None."""
    call = item if isinstance(item, cst.Call) else None
    qualified = names.qualify(call.func if call is not None else item)
    if qualified is None:
        return None
    if qualified in NO_GRAD_CONTEXTS:
        return "off"
    if qualified in ("torch.enable_grad", "torch.autograd.enable_grad"):
        return "on"
    if qualified in ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled") and call is not None:
        flag = positional(call, 0) or keyword(call, "mode")
        if isinstance(flag, cst.Name) and flag.value in ("True", "False"):
            return "on" if flag.value == "True" else "off"
    return None


# --- building the facts -------------------------------------------------------------


def find_training_loops(module: cst.Module, names: ModuleNames, source: Optional[str] = None,
                        trainers: Optional[FrozenSet[str]] = None) -> List[TrainingLoop]:
    """Every training loop of `module`; `source`, its text if known, spares looking for `:=` where it has none.
    `trainers`: the names one of a loop's calls must be spelled with for the loop to train, if known (the screen's,
    `engine._gated_loops`): a loop with no such call is passed over without following its calls."""
    autograd = frameworks.Autograd(names)
    if autograd.is_torch is False:
        return []  # another framework's file (Gluon, Paddle, OneFlow imported `as torch`...): not PyTorch
    finder = _LoopFinder(module, names, walrus=source is None or ":=" in source, source=source, trainers=trainers)
    finder.walk(block_of(module), (), None, None, module)
    if autograd.is_torch is None and autograd.others:
        return [loop for loop in finder.loops if autograd.foreign(_trained_with(loop, names)) is None]
    return finder.loops


def _alternatives(value: cst.BaseExpression) -> List[cst.BaseExpression]:
    """`a if c else b` -> [a, b]."""
    if isinstance(value, cst.IfExp):
        return _alternatives(value.body) + _alternatives(value.orelse)
    return [value]


def _restored(value: cst.BaseExpression) -> bool:
    """A value read back from saved state rather than written as a number: `checkpoint["step"]`,
    `state.get("iteration", 0)`, `int(ckpt["it"]) + 1`, `args.start_iter`, `resume_step`."""
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Add, cst.Subtract)):
        return any(_restored(side) for side in (value.left, value.right)) and all(
            _restored(side) or int_value(side) is not None for side in (value.left, value.right))
    if isinstance(value, cst.Name):
        return value.value not in ("None", "True", "False")
    return isinstance(value, (cst.Subscript, cst.Attribute, cst.Call))


def _trained_with(loop: TrainingLoop, names: ModuleNames) -> Iterator[Optional[str]]:
    """The qualified names a loop's backward and step are bound to: the constructors of what it steps and of
    the losses it backpropagates (and of the criteria that compute them), and the `with` contexts in and
    around its body (`with autograd.record():`). A name is read where the loop sees it (its value before the
    loop, or in the iteration), the file's bindings of it only where neither says."""

    def values(name: str, where) -> List[cst.BaseExpression]:
        seen = [value for value in loop.values_at(name, where) if value is not None]
        return seen or names.values_of(name)

    def constructors(name: str, where) -> Iterator[Optional[str]]:
        for value in values(name, where):
            if isinstance(value, cst.Call):
                yield names.callee(value)
                inner = dotted_name(value.func)
                if inner is not None and inner != name and not names.qualify(value.func):
                    # `loss = loss_fn(net(x), y)`: what built `loss_fn`
                    for built in values(inner, where):
                        if isinstance(built, cst.Call):
                            yield names.callee(built)
        for annotation in names.annotations.get(name, ()):
            yield names.qualify(annotation)

    for step in loop.steps:
        yield from constructors(step.receiver, step)
    for backward in loop.own_backwards:
        if backward.loss_name is not None:
            yield from constructors(backward.loss_name, backward)
    contexts = list(loop.outer_contexts)
    for node in loop.iteration.members:
        contexts.extend(loop.flow.graph.nodes[node].contexts)
    for item in contexts:
        yield names.callee(item) if isinstance(item, cst.Call) else names.qualify(item)


_SIMPLE = frozenset({cst.SimpleStatementLine, cst.SimpleStatementSuite})
_DEFINITIONS = frozenset({cst.FunctionDef, cst.ClassDef})


def executed(statements: Block) -> Tuple[cst.CSTNode, ...]:
    """The statements of a block that run their own code where they stand: not a `def` or a `class`, whose body
    runs only when it is called (`def reset(opt): opt.zero_grad()` before a loop resets nothing)."""
    return tuple(statement for statement in statements if type(statement) not in _DEFINITIONS)


def _nested_blocks(statement: cst.CSTNode) -> List[cst.CSTNode]:
    """The owners of the blocks nested in a compound statement (an `elif` is its own `if`)."""
    kind = type(statement)  # as `isinstance`: LibCST's node classes have no subclasses (and `type` is faster)
    if kind in _SIMPLE:
        return []
    if kind is cst.If:
        orelse = statement.orelse
        return [statement] + ([orelse] if orelse is not None else [])
    if kind is cst.For or kind is cst.While:
        return [statement] + ([statement.orelse] if statement.orelse is not None else [])
    if kind is cst.With:
        return [statement]
    if kind is cst.Try or kind is cst.TryStar:
        owners: List[cst.CSTNode] = [statement, *statement.handlers]
        owners += [part for part in (statement.orelse, statement.finalbody) if part is not None]
        return owners
    if isinstance(statement, cst.Match):
        return list(statement.cases)
    return []


class _LoopFinder:
    def __init__(self, module: cst.Module, names: ModuleNames, walrus: bool = True,
                 source: Optional[str] = None, trainers: Optional[FrozenSet[str]] = None) -> None:
        self.module = module
        self.trainers = trainers
        self._functions: Optional[Functions] = None
        self.names = names
        self.walrus = walrus
        self.loops: List[TrainingLoop] = []
        self._flows: Dict[int, FunctionFlow] = {}
        self._updates: Dict[int, str] = {**windowed_methods(module, names), **update_functions(module, names, source)}
        self._source = source
        self._unbound: Optional[FrozenSet[str]] = None

    @property
    def unbound(self) -> FrozenSet[str]:
        """Names only other functions bind: a statement reading one raises NameError (`amp` imported in
        `__init__`). Read once, when a graph is first built."""
        if self._unbound is None:
            self._unbound = scopes.bound_only_in_functions(self._source) if self._source is not None else frozenset()
        return self._unbound

    def walk(self, statements: Block, chain: Tuple[Tuple[Block, int], ...], function: Optional[cst.FunctionDef],
             class_def: Optional[cst.ClassDef], owner: cst.CSTNode, top: Optional[cst.CSTNode] = None) -> None:
        for index, statement in enumerate(statements):
            here = chain + ((statements, index),)
            top_here = top if top is not None else statement
            kind = type(statement)
            if (kind is cst.For or kind is cst.While) and self._trains(statement, function):
                self.loops.append(self._build(statement, function, class_def, here, owner, top_here))
            if kind is cst.FunctionDef:
                framework = self._updates.get(id(statement))
                if framework is not None and _calls_backward_directly(statement, self.names, []):
                    self.loops.append(self._update_loop(statement, class_def, top_here, framework))
                self.walk(block_of(statement), (), statement, class_def, statement, top_here)
            elif kind is cst.ClassDef:
                self.walk(block_of(statement), (), None, statement, statement, top_here)
            else:
                for block_owner in _nested_blocks(statement):
                    if block_owner is statement or not isinstance(block_owner, cst.If):
                        self.walk(block_of(block_owner), here, function, class_def, owner, top_here)
                    else:
                        self.walk((block_owner,), here, function, class_def, owner, top_here)

    def _update_loop(self, function: cst.FunctionDef, class_def: Optional[cst.ClassDef], top: cst.CSTNode,
                     framework: str) -> TrainingLoop:
        """A framework's update function as the body of a loop: `while True:` around its statements (the
        same nodes), in a copy of the function that holds only that loop."""
        loop = cst.While(test=cst.Name("True"), body=function.body)
        owner = function.with_changes(body=cst.IndentedBlock(body=[loop]))
        built = self._build(loop, function, class_def, (), owner, top)
        # What nested loops do is theirs (each is a training loop of its own when it backpropagates).
        kept = {name: tuple(site for site in getattr(built, name) if site.depth == 0)
                for name in ("backwards", "steps", "resets", "scalings", "calls", "assignments")}
        built = dataclasses.replace(built, **kept)
        counters = built.counters
        index = _batch_index(function) if framework == "lightning" else None
        if index is not None and all(c.name != index for c in counters):
            counters = (LoopCounter(index, 0, "framework"),) + counters  # Lightning's `batch_idx` starts at 0
        if framework == "speechbrain" and not _assigns_attribute(class_def, "self.step") \
                and all(c.name != "self.step" for c in counters):
            counters = (LoopCounter("self.step", 1, "framework"),) + counters  # SpeechBrain's, 1 on the first batch
        if framework == "ignite":
            counters = self._ignite_iteration(function, built) + counters
        if framework == "method":  # a counter kept in an attribute starts where the class sets it
            counters = tuple(dataclasses.replace(c, start=attribute_start(class_def, c.name),
                                                 restarted_after=_restart_after_callers(self.module, function,
                                                                                        class_def, c.name))
                             if c.source == "manual" and c.start is None else c for c in counters)
        return dataclasses.replace(built, framework=framework, counters=counters, whole_run=False)

    def _ignite_iteration(self, function: cst.FunctionDef, built: "TrainingLoop") -> Tuple[LoopCounter, ...]:
        """Ignite's `engine.state.iteration` (the process function's first parameter, or the engine's name the
        function reads), 1 on the first iteration of the run the file starts, counting on across its epochs."""
        parameters = parameter_names(function)
        optimizers = frozenset(step.receiver for step in built.steps if step.receiver)
        run = frameworks.ignite_run(self.module, self.names, function, optimizers) if optimizers else None
        if run is None:
            return ()
        found = []
        for engine in ([parameters[0]] if parameters else []) + [run.engine]:
            name = f"{engine}.state.iteration"
            if all(c.name != name for c in built.counters) and engine not in parameters[1:]:
                found.append(LoopCounter(name, 1, "framework", origin=run.call, iterable=run.data, run=run))
        return tuple(found)

    def _trains(self, loop: Loop, function: Optional[cst.FunctionDef]) -> bool:
        """A backward in the loop's body, or in a function of this file it calls (`training.calls`)."""
        calls: List[cst.Call] = []
        if _calls_backward_directly(loop, self.names, calls):
            return True
        if self.trainers is not None and all(self.trainers.isdisjoint(_callee_parts(call.func)) for call in calls):
            return False  # the screen found no call here that may run a backward, of this file or another
        defined = self.names.functions  # a call of a function defined in this file can run one
        local = [call for call in calls if short_callee(call.func) in defined
                 or (self.inherits_framework and self.functions.callee(call, function) is not None)]
        if local and any(self.functions.has_work(call, function) for call in local):
            return True
        # or a call that runs a function (or an object's method) of another file of the project
        return self.names.project is not None and any(
            self.functions.has_work(call, function) for call in calls if short_callee(call.func) not in defined)

    @functools.cached_property
    def inherits_framework(self) -> bool:
        """A class of the file subclasses a framework's class whose methods `training.frameworks` models (the
        Hugging Face `Trainer`): a loop's `self.training_step(...)` may run the inherited one."""
        return any(self.names.qualify(base.value) in frameworks.HF_TRAINERS
                   for classes in self.names.classes.values() for class_def in classes for base in class_def.bases)

    @property
    def functions(self) -> Functions:
        if self._functions is None:
            self._functions = Functions(self.module, self.names, self.walrus, self.unbound)
        return self._functions

    def _whole_run(self, loop: Loop, function: Optional[cst.FunctionDef], enclosing: list) -> Optional[bool]:
        """Yes: no loop around it in its function, which is the module or is called here only outside loops
        (`main()` under `if __name__ == "__main__":`). No: an epoch loop encloses it, or its function is called
        from a loop. Unknown: its function is not called in this file (another file may, once an epoch)."""
        if enclosing:
            return False
        if function is None:
            return True
        called = self.functions.called_in_loop(function)
        return None if called is None else not called

    def _flow(self, owner: cst.CSTNode) -> FunctionFlow:
        flow = self._flows.get(id(owner))
        if flow is None:
            flow = self._flows[id(owner)] = FunctionFlow(
                ControlFlowGraph(owner, graph.inplace_effects, self.walrus, self.unbound))
        return flow

    def _build(self, loop: Loop, function: Optional[cst.FunctionDef], class_def: Optional[cst.ClassDef],
               enclosing: Tuple[Tuple[Block, int], ...], owner: cst.CSTNode, top: cst.CSTNode) -> TrainingLoop:
        flow = self._flow(owner)
        region = flow.graph.region(loop)
        iteration = flow.iteration(region)
        found = SiteCollector(self.names, flow.graph, region, iteration, function, lambda: self.functions).collect()
        draft = TrainingLoop(
            node=loop, function=function, class_def=class_def, enclosing=enclosing, flow=flow, iteration=iteration,
            backwards=tuple(found.backwards), steps=tuple(found.steps), resets=tuple(found.resets),
            scalings=tuple(found.scalings), calls=tuple(found.calls), assignments=tuple(found.assignments),
            outer_contexts=flow.graph.nodes[region.head].contexts, top_statement=top, names=self.names,
            functions=self.functions,
        )
        names = self.names
        receivers = {step.receiver for step in draft.steps}
        scaled = {step.receiver for step in draft.steps if step.via_scaler}
        # `x.zero_grad()` in the loop or anywhere in its function (read once per loop).
        reset = {r.target for r in draft.resets if r.kind == "zero_grad"}
        if function is not None:
            reset |= roles.zero_grad_receivers(function)
        # an object the loop hands the loss to backpropagate and steps (`model.backward(loss)`, `model.step()`) is
        # an optimizer only on evidence of its own: its name or its class (apex's `FP16_Optimizer`). Its reset
        # before the loop is no such evidence: a DeepSpeed engine resets like a module, and clears the gradients
        # in its own step.
        engines = {backward.loss_taker for backward in draft.backwards} - {None}
        optimizers = frozenset(r for r in receivers
                               if roles.is_optimizer(r, names, scaled, reset if r not in engines else ()))
        schedulers = frozenset(r for r in receivers - optimizers if roles.is_scheduler(r, names))
        models = tuple((optimizer, roles.optimized_models(optimizer, names)) for optimizer in sorted(optimizers))
        scheduled = tuple(
            (scheduler, optimizer) for scheduler in sorted(schedulers)
            for optimizer in [roles.scheduled_optimizer(scheduler, optimizers, names)] if optimizer is not None
        )
        return TrainingLoop(**{
            **{name: getattr(draft, name) for name in draft.__dataclass_fields__},
            "whole_run": self._whole_run(loop, function, flow.graph.enclosing_loops(region)),
            "counters": tuple(_counters(draft, names)), "optimizer_names": optimizers,
            "scheduler_names": schedulers, "optimizer_models": models, "scheduled_optimizers": scheduled,
        })


def _counters(loop: TrainingLoop, names: ModuleNames) -> List[LoopCounter]:
    counters: List[LoopCounter] = []
    if isinstance(loop.node, cst.For):
        counter = windows.header_counter(loop.node, names, loop.iterable_before_loop, loop.fresh_value)
        if counter is not None:
            counters.append(counter)
    header = counters[0] if counters and counters[0].source in ("enumerate", "range", "count") else None
    for assignment in loop.assignments:
        # A counter bumped after `if skip: continue` still counts the micro-batches trained on, and so does one
        # bumped on every micro-batch but one (`if not is_last_batch: global_step += 1`).
        guarded = any(not guard.after_continue and not _skips_one_iteration(loop, header, guard)
                      for guard in assignment.guards)
        if assignment.depth != 0 or guarded or not windows.is_increment(assignment):
            continue
        if any(c.name == assignment.target for c in counters):
            continue
        start = int_value(loop.fresh_value(assignment.target))
        resumed = start is not None and loop.restored_before_loop(assignment.target)
        counter = LoopCounter(assignment.target, start, "manual", assignment, None, resumed=resumed)
        if start is not None and not resumed and not assignment.guards and isinstance(loop.node, cst.For) \
                and _restarted_each_run(loop, assignment.target, start):
            iterable, endless = windows.walked_iterable(loop.node, names, loop.iterable_before_loop)
            counter = dataclasses.replace(counter, paced=True, iterable=iterable, endless=endless)
        counters.append(counter)
    return counters


def _restarted_each_run(loop: TrainingLoop, name: str, start: int) -> bool:
    """`name` is `start` whenever the loop starts, on every path into it and in every run of it (set again
    before the loop in each epoch, or the loop runs once), and the loop's body sets it in one place only."""
    region = loop.iteration.region
    if sum(1 for index in region.body for d in loop.flow.graph.nodes[index].definitions if d.name == name) != 1:
        return False
    if loop.carried_into_next_run(name):
        return False
    definitions = loop.flow.entering(region, name)
    if not definitions or loop.flow.first_entering(region, name)[1]:
        return False
    for definition in definitions:
        if definition.kind != "assign" or definition.value is None:
            return False
        values = [definition.value] if definition.unpacked else _alternatives(definition.value)
        if any(int_value(value) != start for value in values):
            return False
    return True


def _skips_one_iteration(loop: TrainingLoop, header: Optional[LoopCounter], guard) -> bool:
    """The branch `guard` opens is left out on one iteration of the loop at most: it runs where the header's
    counter differs from a value the loop does not change (`if i != len(loader) - 1:`, `if not is_last_batch:`
    with `is_last_batch = i == len(loader) - 1` assigned in the iteration, the `else` of `if i + 1 == n:`)."""
    if header is None:
        return False
    test, holds = guard.test, not guard.negated
    for _ in range(4):
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, holds = test.expression, not holds
        if not isinstance(test, cst.Name):
            break
        flag = loop._flag(guard.read_at, test.value)
        if flag is None:
            return False
        test = flag[0]
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    operator = test.comparisons[0].operator
    if not isinstance(operator, cst.NotEqual if holds else cst.Equal):
        return False
    sides = (test.left, test.comparisons[0].comparator)
    for counted, other in (sides, sides[::-1]):
        if isinstance(counted, cst.BinaryOperation) and isinstance(counted.operator, (cst.Add, cst.Subtract)) \
                and int_value(counted.right) is not None:
            counted = counted.left
        if dotted_name(counted) == header.name and not any(
                loop.assigned_in_loop(read) for read in iter_names(other)):
            return True
    return False


def _leaves_early(statements: Block, nested: bool = False) -> bool:
    """A `return`, or (outside loops nested in it) a `break`, among `statements`: the loop may end before its
    header's count."""
    for statement in statements:
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in statement.body:
                if isinstance(small, cst.Return) or (isinstance(small, cst.Break) and not nested):
                    return True
        elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        else:
            inner = nested or isinstance(statement, (cst.For, cst.While))
            for block_owner in _nested_blocks(statement):
                blocks = [block_owner] if isinstance(block_owner, cst.If) and block_owner is not statement else None
                if blocks is not None:
                    if _leaves_early(blocks, inner):
                        return True
                elif _leaves_early(block_of(block_owner), inner):
                    return True
    return False


class _AfterLoop:
    """Reads the statements after a loop, one at a time, for the optimizer step that ends the window the loop
    is: `statement` gives the steps it holds (alternatives on the branches of an `if`); `blocked` once one of
    them backpropagates, resets gradients, leaves (`return`, `break`, `continue`), steps under a condition
    some branch lacks, or calls a function of the file that trains; `rescaled` once one rescales gradients."""

    def __init__(self, loop: TrainingLoop) -> None:
        self.loop = loop
        self.names = loop.names
        self.blocked = False
        self.rescaled = False
        self._reset = roles.zero_grad_receivers(loop.function) if loop.function is not None else set()

    def statement(self, statement: cst.CSTNode) -> List[StepSite]:
        if self.blocked or isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            return []
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return self._line(statement)
        if isinstance(statement, cst.If):
            return self._branches(statement)
        if isinstance(statement, cst.With):
            return self.block(block_of(statement))
        if isinstance(statement, (cst.For, cst.While, cst.Try, cst.TryStar, cst.Match)):
            steps = self.block([part for owner in _nested_blocks(statement) for part in
                                ([owner] if isinstance(owner, cst.If) and owner is not statement else block_of(owner))])
            if steps:
                self.blocked = True  # a step inside a loop or a `try`: how often it runs, unknown
            return []
        return []

    def block(self, statements: Block) -> List[StepSite]:
        for statement in statements:
            steps = self.statement(statement)
            if steps or self.blocked:
                return steps
        return []

    def _branches(self, statement: cst.If) -> List[StepSite]:
        """The steps of an `if`'s branches (an `elif` is a branch of its own; a missing `else` one that does
        nothing): one on every branch, of the same optimizer, or none at all."""
        branches: List[Block] = []
        branch: Optional[cst.CSTNode] = statement
        while isinstance(branch, cst.If):
            branches.append(block_of(branch))
            branch = branch.orelse
        branches.append(block_of(branch) if isinstance(branch, cst.Else) else ())
        found: List[StepSite] = []
        stepping = 0
        for body in branches:
            steps = self.block(body)
            if self.blocked:
                return []
            stepping += bool(steps)
            found += steps
        if found and (stepping != len(branches) or len({step.receiver for step in found}) != 1):
            self.blocked = True  # a step only some paths take
            return []
        return found

    def _line(self, line: cst.CSTNode) -> List[StepSite]:
        for small in line.body:
            if isinstance(small, (cst.Return, cst.Break, cst.Continue)):
                self.blocked = True
                return []
        work = roles.GradWork(line, self.names)
        for call in calls_in(line):
            if roles.classify_backward(call, self.names) is not None:
                self.blocked = True
                return []
            func = call.func
            receiver = dotted_name(func.value) if isinstance(func, cst.Attribute) else None
            if receiver is not None and func.attr.value == "step":
                optimizer = dotted_name(positional(call, 0)) if roles.is_scaler(receiver, self.names) else None
                via_scaler = optimizer is not None
                stepped = optimizer or receiver
                if stepped and roles.is_optimizer(stepped, self.names, {optimizer} - {None}, self._reset):
                    site = self.loop.step_site_at(line, call, stepped, via_scaler)
                    if work.resets or site is None:
                        self.blocked = True
                        return []
                    return [site]
                continue
            for helper in roles.helpers(dotted_name(func), self.names, self.loop.function):
                done = roles.GradWork(helper.body, self.names)
                if done.resets or (self.loop.functions is not None and self.loop.functions.has_work(
                        call, self.loop.function)):
                    self.blocked = True
                    return []
                self.rescaled = self.rescaled or done.scales
        if work.resets:
            self.blocked = True
            return []
        self.rescaled = self.rescaled or work.scales
        return []


def _calls_backward_directly(loop: Loop, names: ModuleNames, calls: List[cst.Call]) -> bool:
    """A backward call in the loop's body, looking through `if`/`with`/`try`, not nested loops or functions;
    the other calls met on the way are added to `calls`."""
    stack: List = list(block_of(loop))
    while stack:
        statement = stack.pop()
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for call in calls_in(statement):
                if roles.classify_backward(call, names) is not None:
                    return True
                calls.append(call)
        elif isinstance(statement, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef)):
            continue
        else:
            for block_owner in _nested_blocks(statement):
                if isinstance(block_owner, cst.If) and block_owner is not statement:
                    stack.append(block_owner)  # an `elif`
                else:
                    stack.extend(block_of(block_owner))
    return False


def _callee_parts(func: cst.BaseExpression) -> Set[str]:
    """`{"self", "scaler"}` for `self.scaler(...)`: the names a callee is spelled with (as `engine` finds them)."""
    parts: Set[str] = set()
    while isinstance(func, cst.Attribute):
        parts.add(func.attr.value)
        func = func.value
    if isinstance(func, cst.Name):
        parts.add(func.value)
    return parts


def uses_attribute_of(node: cst.CSTNode, name: str) -> bool:
    """`name.anything` somewhere in `node`."""
    return any(isinstance(part, cst.Attribute) and isinstance(part.value, cst.Name) and part.value.value == name
               for part in preorder(node))


_ENGINES = frameworks.IGNITE_ENGINES


def update_functions(module: cst.Module, names: ModuleNames, source: Optional[str]) -> Dict[int, str]:
    """The functions a framework calls once per training iteration, by id: the process function handed to
    an Ignite `Engine(update_fn)`, and `training_step` of a class that turns Lightning's automatic
    optimisation off (`self.automatic_optimization = False`)."""
    found: Dict[int, str] = {}
    if source is not None and "Engine(" not in source and "automatic_optimization" not in source \
            and "fit_batch" not in source:
        return found
    for part in preorder(module):
        kind = type(part)  # as `isinstance`: LibCST's node classes have no subclasses (and `type` is faster)
        if kind is cst.ClassDef and speechbrain_brain(part, names):
            for statement in block_of(part):
                if isinstance(statement, cst.FunctionDef) and statement.name.value == "fit_batch":
                    found[id(statement)] = "speechbrain"
        if kind is cst.Call and names.callee(part) in _ENGINES:
            handed = positional(part, 0) or keyword(part, "process_function")
            candidates = names.functions.get(handed.value, []) if isinstance(handed, cst.Name) else []
            if len(candidates) == 1:
                found[id(candidates[0])] = "ignite"
        elif kind is cst.ClassDef and manual_optimisation(part):
            for statement in block_of(part):
                if isinstance(statement, cst.FunctionDef) and statement.name.value == "training_step":
                    found[id(statement)] = "lightning"
    return found


def windowed_methods(module: cst.Module, names: ModuleNames) -> Dict[int, str]:
    """Methods of the file's classes that are a loop's body, by id: a loop of this file calls the method on
    every iteration (`learner.optimize(x, y)`, `self.optimize(x, y)`), and the method runs a backward on every
    call and steps under an `if` (`self.n_iter += 1; if self.n_iter % self.accum == 0: self.opt.step()`).
    The step's window is kept in the object's attributes, so it runs across the calls the way a counter of
    the loop runs across its iterations. A method whose name another function of the file shares is left out
    (which one the call runs is unknown)."""
    found: Dict[int, str] = {}
    methods: Dict[str, cst.FunctionDef] = {}
    for classes in names.classes.values():  # every class statement of the file, found once by the name table
        for part in classes:
            for statement in block_of(part):
                if isinstance(statement, cst.FunctionDef) and not statement.name.value.startswith("__") \
                        and not statement.decorators and _steps_under_if(statement):
                    methods[statement.name.value] = statement
    methods = {name: method for name, method in methods.items() if len(names.functions.get(name, [])) == 1}
    if not methods:
        return found
    for part in preorder(module):
        if isinstance(part, (cst.For, cst.While)):
            for call in _calls_on_every_iteration(part):
                func = call.func
                method = methods.get(func.attr.value) if isinstance(func, cst.Attribute) else None
                if method is not None and id(method) not in found and _calls_backward_directly(method, names, []):
                    found[id(method)] = "method"
    return found


def _steps_under_if(function: cst.FunctionDef) -> bool:
    """A `.step()` call inside an `if` of the function's own body (not in a nested loop or function)."""
    pending: List[cst.CSTNode] = list(block_of(function))
    while pending:
        statement = pending.pop()
        if isinstance(statement, cst.If):
            return any(isinstance(call.func, cst.Attribute) and call.func.attr.value == "step"
                       for call in calls_in(statement))
        if isinstance(statement, (cst.With, cst.Try)):
            pending.extend(block_of(statement))
    return False


def _calls_on_every_iteration(loop: Loop) -> Iterator[cst.Call]:
    """The calls of the loop's body outside any `if`, loop, `try` or nested definition (through `with`)."""
    pending: List[cst.CSTNode] = list(block_of(loop))
    while pending:
        statement = pending.pop()
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            yield from calls_in(statement)
        elif isinstance(statement, cst.With):
            pending.extend(block_of(statement))


def _restart_after_callers(module: cst.Module, method: cst.FunctionDef, class_def: Optional[cst.ClassDef],
                           name: str) -> Optional[cst.CSTNode]:
    """The statement that sets the attribute counter `name` back to its start right after every loop of the file
    that calls `method` on each iteration (`learner.end_epoch()` after `for x, y in loader:
    learner.optimize(x, y)`), before anything there steps; None when some such loop is followed by a step, a
    call of a method of the class that steps, or nothing that restarts the count."""
    if class_def is None or not name.startswith("self."):
        return None
    methods = {statement.name.value: statement for statement in block_of(class_def)
               if isinstance(statement, cst.FunctionDef)}
    stepping = {called for called, body in methods.items() if any(
        isinstance(call.func, cst.Attribute) and call.func.attr.value == "step" for call in calls_in(body))}
    resetting = {called for called, body in methods.items() if called not in stepping and called != method.name.value
                 and any(isinstance(part, cst.Assign) and any(dotted_name(t.target) == name for t in part.targets)
                         for part in preorder(body))}
    found: Optional[cst.CSTNode] = None
    callers = 0
    for block in _blocks_in(module):
        for index, statement in enumerate(block):
            if not isinstance(statement, (cst.For, cst.While)) or not any(
                    isinstance(call.func, cst.Attribute) and call.func.attr.value == method.name.value
                    for call in _calls_on_every_iteration(statement)):
                continue
            callers += 1
            restart = None
            for after in block[index + 1:]:
                calls = [call for call in calls_in(after) if isinstance(call.func, cst.Attribute)]
                if any(call.func.attr.value == "step" or call.func.attr.value in stepping for call in calls) \
                        or isinstance(after, (cst.For, cst.While)):
                    break
                if any(call.func.attr.value in resetting for call in calls):
                    restart = after
                    break
            if restart is None:
                return None
            found = restart
    return found if callers else None


def _blocks_in(module: cst.Module) -> Iterator[Sequence[cst.CSTNode]]:
    """Every block of statements in the module."""
    for part in preorder(module):
        if isinstance(part, (cst.Module, cst.IndentedBlock)):
            yield part.body


def attribute_start(class_def: Optional[cst.ClassDef], name: str) -> Optional[int]:
    """The value an attribute counter (`self.n_iter`) has on the first call of a method of its class: the one
    constant every plain assignment of it in the class gives (`self.n_iter = 0` in `__init__` and in
    `end_epoch()`); None when any assignment gives another value, or reads something else."""
    if class_def is None or not name.startswith("self."):
        return None
    constants = set()
    for part in preorder(class_def):
        if isinstance(part, cst.Assign):
            for target in part.targets:
                if dotted_name(target.target) == name:
                    constants.add(int_value(part.value))
                elif any(dotted_name(inner) == name for inner in preorder(target.target)):
                    return None  # unpacked into, or an element of
        elif isinstance(part, (cst.AnnAssign, cst.AugAssign)) and dotted_name(part.target) == name:
            if isinstance(part, cst.AnnAssign):
                constants.add(int_value(part.value) if part.value is not None else None)
            elif not (isinstance(part.operator, cst.AddAssign) and int_value(part.value) == 1):
                return None
    if len(constants) != 1 or None in constants:
        return None
    return constants.pop()


def _attribute_history(loop: TrainingLoop, name: str) -> Optional[Tuple[Optional[cst.BaseExpression], FrozenSet[str]]]:
    """What the loop's class does to an attribute (`self.global_step`) outside the method holding the loop:
    (the constant its `__init__` gives it, the methods that write it back from saved state). The class's bases
    of this file or of another file of the project count. A write from saved state is a value read back
    (`self.global_step = payload["global_step"]`) or a write by name (`setattr(self, key, value)`,
    `self.__dict__[key] = value`), in a method or one that calls it (`load_checkpoint()` calling
    `load_payload()`): a resume. None when another method writes it otherwise (`self.global_step += 1` in a
    helper, `= 5`), `__init__` gives it anything but one constant or restores it; (None, ()) for a name that
    is not an attribute of the method's own object."""
    function, class_def = loop.function, loop.class_def
    if function is None or class_def is None or function.name.value == "__init__" or name.count(".") != 1 \
            or not name.startswith("self.") or not any(statement is function for statement in block_of(class_def)) \
            or parameter_names(function)[:1] != ["self"] or loop.names is None:
        return None, frozenset()
    methods: List[cst.FunctionDef] = [statement for owner in _class_chain(class_def, loop.names, 0)
                                      for statement in block_of(owner)
                                      if isinstance(statement, cst.FunctionDef) and statement is not function]
    constants: List[cst.BaseExpression] = []
    restorers: Set[str] = set()
    for method in methods:
        for kind, value in _attribute_writes(method, name):
            if method.name.value == "__init__" and kind == "constant":
                constants.append(value)
            elif method.name.value != "__init__" and kind == "restored":
                restorers.add(method.name.value)
            else:
                return None
    grown = True
    while grown:  # a method that calls one that restores restores too
        grown = False
        for method in methods:
            if method.name.value not in restorers and _calls_own_method(method, restorers):
                if method.name.value == "__init__":
                    return None
                restorers.add(method.name.value)
                grown = True
    if any(int_value(value) != int_value(constants[0]) for value in constants[1:]):
        return None
    return (constants[0] if constants else None), frozenset(restorers)


def _class_chain(class_def: cst.ClassDef, names: ModuleNames, depth: int) -> List[cst.ClassDef]:
    """The class and its bases that the project defines, in this file or in another file it imports them from."""
    chain = [class_def]
    if depth > 4:
        return chain
    for base in class_def.bases:
        dotted = dotted_name(base.value) if base.keyword is None else None
        if dotted is None:
            continue
        local = names.classes.get(dotted, [])
        if len(local) == 1 and local[0] is not class_def:
            chain += _class_chain(local[0], names, depth + 1)
            continue
        project = names.project
        target = names.imported(dotted) if project is not None else None
        found = project.read_definition(target) if project is not None else None
        if found is not None and isinstance(found[1], cst.ClassDef):
            chain += _class_chain(found[1], found[0].names, depth + 1)
    return chain


def _attribute_writes(method: cst.FunctionDef, name: str) -> Iterator[Tuple[str, Optional[cst.BaseExpression]]]:
    """How `method` writes the attribute `name`: ("constant", value), ("restored", None) for a value read back
    from saved state or a write by name, ("other", None)."""
    for part in preorder(method):
        if isinstance(part, cst.Call):
            callee = dotted_name(part.func)
            first = part.args[0].value if part.args else None
            if (callee == "setattr" and dotted_name(first) == "self") or callee == "self.__dict__.update":
                yield "restored", None
        if not isinstance(part, (cst.Assign, cst.AugAssign, cst.AnnAssign)) or part.value is None:
            continue
        targets = [t.target for t in part.targets] if isinstance(part, cst.Assign) else [part.target]
        for target in targets:
            written = [dotted_name(inner) for inner in preorder(target)]
            if "self.__dict__" in written:
                yield "restored", None
            if name not in written:
                continue
            if isinstance(part, cst.AugAssign):
                yield "other", None
            elif dotted_name(target) == name and int_value(part.value) is not None:
                yield "constant", part.value
            else:
                yield ("restored" if _restored(part.value) else "other"), None


def _calls_own_method(node: cst.CSTNode, methods: Set[str]) -> bool:
    return any(dotted_name(call.func) in {f"self.{method}" for method in methods} for call in calls_in(node))


_BRAINS = frozenset({"speechbrain.Brain", "speechbrain.core.Brain"})


def speechbrain_brain(class_def: cst.ClassDef, names: ModuleNames) -> bool:
    """A subclass of SpeechBrain's `Brain` (`class ASR(sb.Brain):`): its `fit_batch(self, batch)` is the body of
    the loop `Brain._fit_train` runs, which advances `self.step` by one before each call (so it is 1 on an
    epoch's first batch), zeroes the gradients and sets `self.step` back to 0 after each epoch."""
    return any(names.qualify(base.value) in _BRAINS for base in class_def.bases if base.keyword is None)


def _assigns_attribute(class_def: Optional[cst.ClassDef], name: str) -> bool:
    """The class binds `name` (`self.step = ...`, `self.step += 1`) somewhere."""
    if class_def is None:
        return False
    for part in preorder(class_def):
        if isinstance(part, cst.Assign) and any(
                dotted_name(inner) == name for target in part.targets for inner in preorder(target.target)):
            return True
        if isinstance(part, (cst.AugAssign, cst.AnnAssign)) and dotted_name(part.target) == name:
            return True
    return False


def manual_optimisation(class_def: cst.ClassDef) -> bool:
    for part in preorder(class_def):
        if isinstance(part, cst.Assign) and isinstance(part.value, cst.Name) and part.value.value == "False" and any(
                dotted_name(target.target) == "self.automatic_optimization" for target in part.targets):
            return True
    return False


def _batch_index(function: cst.FunctionDef) -> Optional[str]:
    """`batch_idx` in `training_step(self, batch, batch_idx)`."""
    parameters = [p.name.value for p in function.params.params]
    return parameters[2] if len(parameters) >= 3 and parameters[0] == "self" else None
