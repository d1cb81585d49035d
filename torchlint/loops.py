"""Training-loop facts: the model every rule asks its questions of.

A *training loop* is a `for`/`while` statement whose body, looking through
`if`/`with`/`try` but not into nested loops, functions or classes, calls a
backward (`loss.backward()`, `torch.autograd.backward(loss)`,
`scaler.scale(loss).backward()`, `accelerator.backward(loss)`,
`self.manual_backward(loss)`) or `torch.autograd.grad`.

For each such loop this module records, in program order, every backward,
optimizer step, gradient reset, scheduler step, call and assignment in its
body (nested loops included, marked by depth), with the `if` guards and
`with` contexts on the way to it; the loop counter and where it starts; and
answers the questions rules share: which condition guards a step and what
accumulation count it names, where a loss comes from and whether it was
divided, which names carry values from one iteration to the next.
Rules never re-walk the tree to rediscover these facts.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from torchlint.names import (
    GRAD_SCALERS,
    NO_GRAD_CONTEXTS,
    ModuleNames,
    dotted_name,
    int_value,
    is_true,
    iter_names,
    keyword,
    last_component,
    positional,
    string_value,
)
from torchlint.walk import calls_in, children, preorder

Loop = Union[cst.For, cst.While]
Block = Sequence[Union[cst.BaseStatement, cst.BaseSmallStatement]]

# Wrappers around an iterable that keep its elements and their order.
_PASS_THROUGH_WRAPPERS = frozenset({"tqdm", "trange", "track", "progress", "iter", "list", "islice"})
_ENDLESS_ITERATORS = frozenset({"itertools.cycle", "itertools.repeat", "itertools.count"})
_FRAMEWORK_BACKWARD_OWNERS = ("accelerator", "fabric", "engine")
_FRAMEWORK_CLASSES = ("accelerate.Accelerator", "lightning.Fabric", "lightning.fabric.Fabric", "deepspeed.initialize")


@dataclass(frozen=True)
class Guard:
    """An `if` between the loop and a statement; `negated` when in its `else`.

    `after_continue` marks the guard that `if test: ... continue` puts on the
    statements after it: they run only when `test` is false.
    """

    test: cst.BaseExpression
    negated: bool
    node: cst.CSTNode
    after_continue: bool = False


@dataclass(frozen=True)
class Site:
    """Where something happens in a loop body."""

    order: int
    node: cst.CSTNode
    statement: cst.CSTNode  # the SimpleStatementLine/Suite holding it
    guards: Tuple[Guard, ...]
    contexts: Tuple[cst.BaseExpression, ...]  # `with` items between loop and site
    depth: int  # nested loops between the training loop and the site

    @property
    def guard_nodes(self) -> FrozenSet[int]:
        return frozenset(id(guard.node) for guard in self.guards)

    def runs_whenever(self, other: "Site") -> bool:
        """True when every guard of this site also guards `other`."""
        mine = [(id(g.node), g.negated) for g in self.guards]
        theirs = {(id(g.node), g.negated) for g in other.guards}
        return all(guard in theirs for guard in mine)

    @property
    def on_own_line(self) -> bool:
        """The statement is alone on an indented line, so it can be moved or deleted."""
        return isinstance(self.statement, cst.SimpleStatementLine) and len(self.statement.body) == 1


@dataclass(frozen=True)
class BackwardSite(Site):
    """A backward (or `autograd.grad`) call and the tensor it starts from."""

    loss: Optional[cst.BaseExpression] = None
    kind: str = "tensor"  # tensor | autograd | scaler | framework | manual | grad
    retain_graph: Optional[cst.Arg] = None
    create_graph: bool = False
    receiver: Optional[str] = None  # `accelerator` in `accelerator.backward(loss)`

    @property
    def loss_name(self) -> Optional[str]:
        return dotted_name(self.loss) if self.loss is not None else None


@dataclass(frozen=True)
class StepSite(Site):
    """`<receiver>.step(...)`, or `scaler.step(optimizer)` (receiver = `optimizer`)."""

    receiver: str = ""
    via_scaler: bool = False


@dataclass(frozen=True)
class ResetSite(Site):
    """A gradient reset: `zero_grad()`, `p.grad = None`, `p.grad.zero_()`, or a helper that does one."""

    target: str = ""
    kind: str = "zero_grad"


@dataclass(frozen=True)
class CallSite(Site):
    callee: Optional[str] = None


@dataclass(frozen=True)
class Assignment(Site):
    """`target <operator> value`; `operator` is `=` or an augmented one like `+=`."""

    target: str = ""
    operator: str = "="
    value: Optional[cst.BaseExpression] = None

    @property
    def reads_target(self) -> bool:
        if self.operator != "=":
            return True
        return self.value is not None and self.target in set(iter_names(self.value))


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

    def value_at(self, order: int) -> Optional[int]:
        """The counter's value on the first micro-batch, read at program point `order`."""
        if self.start is None:
            return None
        if self.increment is not None and self.increment.order < order:
            return self.start + 1
        return self.start


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
    remainder: str  # zero | last | other
    guard: Guard
    negated: bool = False


@dataclass(frozen=True)
class LossOrigin:
    """Where a loss tensor comes from, as far as the loop body shows."""

    divided: bool = False
    reductions: FrozenSet[str] = frozenset()  # mean | sum | none | unknown | outside
    sources: Tuple[str, ...] = ()

    def merge(self, other: "LossOrigin") -> "LossOrigin":
        sources = self.sources + tuple(s for s in other.sources if s not in self.sources)
        return LossOrigin(self.divided or other.divided, self.reductions | other.reductions, sources)

    @property
    def is_mean(self) -> bool:
        """Every known part is mean-reduced (PyTorch's default), nothing is summed."""
        known = self.reductions - {"outside"}
        return bool(known) and known <= {"mean", "unknown"}


@dataclass(frozen=True)
class TrainingLoop:
    node: Loop
    function: Optional[cst.FunctionDef]
    class_def: Optional[cst.ClassDef]
    enclosing: Tuple[Tuple[Block, int], ...]  # blocks around the loop, and its index in each
    backwards: Tuple[BackwardSite, ...]
    steps: Tuple[StepSite, ...]  # every `.step()`: optimizers, schedulers and others
    resets: Tuple[ResetSite, ...]
    calls: Tuple[CallSite, ...]
    assignments: Tuple[Assignment, ...]
    counters: Tuple[LoopCounter, ...]
    optimizer_names: FrozenSet[str] = field(default=frozenset())
    scheduler_names: FrozenSet[str] = field(default=frozenset())
    outer_contexts: Tuple[cst.BaseExpression, ...] = ()  # `with` items around the loop, in its function
    optimizer_models: Tuple[Tuple[str, FrozenSet[str]], ...] = ()  # optimizer -> models whose parameters it holds
    scheduled_optimizers: Tuple[Tuple[str, str], ...] = ()  # scheduler -> the optimizer it was built on
    top_statement: Optional[cst.CSTNode] = None  # the module-level statement that holds the loop

    # --- the questions rules ask ------------------------------------------------

    @property
    def loop_backwards(self) -> Tuple[BackwardSite, ...]:
        """Backward calls that make this a training loop (not nested, not `autograd.grad`)."""
        return tuple(b for b in self.backwards if b.depth == 0 and b.kind != "grad")

    @property
    def optimizer_steps(self) -> Tuple[StepSite, ...]:
        return tuple(s for s in self.steps if s.receiver in self.optimizer_names)

    @property
    def scheduler_steps(self) -> Tuple[StepSite, ...]:
        return tuple(s for s in self.steps if s.receiver in self.scheduler_names and not s.via_scaler)

    def step_scheduled_by(self, scheduler: StepSite) -> Optional[StepSite]:
        """The optimizer step that `scheduler` follows: its own optimizer's (`StepLR(opt_g, ...)`),
        else the loop's first optimizer step."""
        steps = [step for step in self.optimizer_steps if step.depth == 0]
        optimizer = dict(self.scheduled_optimizers).get(scheduler.receiver)
        own = [step for step in steps if step.receiver == optimizer]
        return (own or steps or [None])[0]

    def counter(self, name: Optional[str]) -> Optional[LoopCounter]:
        for counter in self.counters:
            if counter.name == name:
                return counter
        return None

    def accumulation_checks(self, site: Site) -> List[AccumulationCheck]:
        """Every accumulation condition among the `if`s guarding `site` (normally a step).

        For a step, a condition counts only when gradients really build up across
        iterations under it: not when the step's own reset runs inside the
        condition before it (WGAN's `if i % n_critic == 0: opt_g.zero_grad(); ...;
        opt_g.step()` is a schedule, not a window), and not when every backward
        outside it is applied by another optimizer's unconditional step.
        """
        checks = []
        for guard in site.guards:
            for check in _accumulation_checks(guard.test, guard, not guard.negated):
                if check.counter is not None and site.depth and _rebound_around(self.node, check.counter, guard.node):
                    continue  # `for i in ...` nested in `for i, x in enumerate(...)`: another loop's counter
                if check.kind == "count" and (self.counter(check.counter) is None or not self._restarts(check)):
                    continue
                if int_value(check.count) == 1:
                    continue
                if isinstance(site, StepSite) and not self._accumulates(site, check):
                    continue
                checks.append(check)
        return checks

    def _restarts(self, check: AccumulationCheck) -> bool:
        """`micro = 0` where `check` holds: a window that starts again, not a one-way threshold
        like `if seen >= warmup_steps: optimizer.step()`."""
        return any(
            assignment.target == check.counter and not assignment.reads_target and self.in_branch(assignment, check)
            for assignment in self.assignments
        )

    def in_branch(self, site: Site, check: AccumulationCheck) -> bool:
        """`site` runs only on iterations where `check` lets the step through."""
        branch = (id(check.guard.node), check.guard.negated)
        return any((id(guard.node), guard.negated) == branch for guard in site.guards)

    def once_per_window(self, site: Site, check: AccumulationCheck) -> bool:
        """`site` runs in `check`'s branch, or under its own condition on the same window:
        `if (i + 1) % n == 0: scheduler.step()` next to `if (i + 1) % n == 0 or last: optimizer.step()`."""
        if self.in_branch(site, check):
            return True
        for guard in site.guards:
            for own in _accumulation_checks(guard.test, guard, not guard.negated):
                if own.kind == check.kind and own.count.deep_equals(check.count) and own.counter == check.counter:
                    return True
        return False

    def accumulated_backwards(self, step: StepSite, check: AccumulationCheck) -> List[BackwardSite]:
        """Backwards whose gradients wait, over several iterations, for `step` under `check`."""
        found = []
        for backward in self.loop_backwards:
            if self.in_branch(backward, check):
                # Only a loss summed over the window (`loss = loss + l`) spans iterations here.
                if backward.loss_name is not None and self.accumulator(backward.loss_name) is not None:
                    found.append(backward)
            elif not self._applied_elsewhere(backward, step):
                found.append(backward)
        return found

    def _accumulates(self, step: StepSite, check: AccumulationCheck) -> bool:
        for reset in self.resets_affecting(step):
            if reset.order < step.order and self.in_branch(reset, check):
                return False
        return bool(self.accumulated_backwards(step, check))

    def _applied_elsewhere(self, backward: BackwardSite, step: StepSite) -> bool:
        """Another optimizer steps whenever `backward` runs: its gradients are that optimizer's."""
        return any(
            other.receiver != step.receiver and other.depth == 0 and other.runs_whenever(backward)
            for other in self.optimizer_steps
        )

    def accumulation_check(self, site: Site) -> Optional[AccumulationCheck]:
        checks = self.accumulation_checks(site)
        return checks[0] if checks else None

    def assignments_to(self, name: str, before: int) -> List[Assignment]:
        return [a for a in self.assignments if a.target == name and a.order < before]

    def first_assignment(self, name: str) -> Optional[Assignment]:
        for assignment in self.assignments:
            if assignment.target == name and assignment.depth == 0:
                return assignment
        return None

    def carried(self, name: str) -> Optional[Assignment]:
        """The update through which `name` carries its value into the next iteration.

        True of `loss += f(x)` and `h = model(x, h)` when no plain assignment
        re-initialises `name` earlier in the same iteration whenever the update
        runs. A reset under a narrower `if` (`if i % n == 0: loss = 0`, at the
        start of a window) leaves the value carried between the resets.
        """
        resets: List[Assignment] = []
        for assignment in self.assignments:
            if assignment.target != name or assignment.depth != 0:
                continue
            if not assignment.reads_target:
                resets.append(assignment)
            elif any(reset.runs_whenever(assignment) for reset in resets):
                return None
            else:
                return assignment
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
            sides = (dotted_name(value.left), dotted_name(value.right))
            if name in sides:
                return first
        return None

    def backward_on_accumulator(self, backward: BackwardSite) -> Optional[Assignment]:
        """The `loss += term` whose running sum `backward` backpropagates again every iteration.

        None when the sum gets a fresh value after the backward whenever it runs
        (`loss = 0` right after it, at the end of a window).
        """
        name = backward.loss_name
        if name is None:
            return None
        accumulation = self.accumulator(name)
        if accumulation is None or self.reassigned_after(name, backward):
            return None
        return accumulation

    def reassigned_after(self, name: str, site: Site) -> bool:
        """`name` gets a fresh value later in the iteration whenever `site` runs."""
        for assignment in self.assignments:
            if assignment.target != name or assignment.order <= site.order or assignment.depth != 0:
                continue
            if assignment.runs_whenever(site) and (not assignment.reads_target or _is_detach(assignment.value, name)):
                return True
        return False

    def feeding_names(self, expression: cst.BaseExpression, before: int, limit: int = 40) -> Set[str]:
        """Names whose values flow into `expression` through this iteration's assignments."""
        return self._flow(expression, before, iter_names, limit)

    def _flow(self, expression: cst.BaseExpression, before: int, read, limit: int) -> Set[str]:
        """The names `read(expression)` gives, followed back through the assignments made before `before`."""
        seen: Set[str] = set()
        pending = [(name, before) for name in read(expression)]
        while pending and len(seen) < limit:
            name, order = pending.pop()
            if name in seen:
                continue
            seen.add(name)
            for assignment in self.assignments_to(name, order):
                if assignment.value is not None:
                    pending.extend((n, assignment.order) for n in read(assignment.value))
        return seen

    def origin(self, expression: cst.BaseExpression, use: Site, names: ModuleNames) -> LossOrigin:
        """Trace a loss expression used at `use` back through the loop body to its criterion."""
        return _OriginTracer(self, names, use).trace(expression, use.order, 0)

    def graph_from_before(self, backward: BackwardSite, names: ModuleNames) -> Optional[str]:
        """A tensor computed before the loop by a forward pass that the backward's loss is built from.

        `features = backbone(x)` then `for head in heads: criterion(head(features), y).backward(
        retain_graph=True)`: every iteration backpropagates through `features`' graph again.
        """
        if backward.loss is None:
            return None
        targets = set(iter_names(self.node.target)) if isinstance(self.node, cst.For) else set()
        for name in sorted(self._value_inputs(backward.loss, backward.order)):
            if name in targets or self.assignments_to(name, backward.order):
                continue
            value = self.value_before_loop(name)
            if value is not None and self._builds_graph(value, names, 0):
                return name
        return None

    def _value_inputs(self, expression: cst.BaseExpression, before: int, limit: int = 40) -> Set[str]:
        """Names read as tensors (not called) by `expression`, through this iteration's assignments."""
        return self._flow(expression, before, _value_names, limit)

    def _builds_graph(self, value: cst.BaseExpression, names: ModuleNames, depth: int) -> bool:
        """`backbone(x)` or an expression over one: a tensor with a graph, as far as the code shows."""
        if depth > 3:
            return False
        if isinstance(value, cst.Call):
            if names.qualify(value.func) is not None:
                # torch factories make leaves; `F.relu(features)` keeps the graph of its input.
                return any(self._builds_graph(arg.value, names, depth + 1) for arg in value.args)
            if isinstance(value.func, cst.Attribute) and value.func.attr.value in _TENSOR_METHODS:
                return self._builds_graph(value.func.value, names, depth + 1)
            # A lower-case callable with inputs is a module's forward; `Net(...)` builds a module.
            callee = dotted_name(value.func) or ""
            return bool(value.args) and not last_component(callee)[:1].isupper()
        if isinstance(value, (cst.Name, cst.Attribute)):
            earlier = self.value_before_loop(dotted_name(value) or "")
            return earlier is not None and self._builds_graph(earlier, names, depth + 1)
        return any(self._builds_graph(part, names, depth + 1) for part in _value_parts(value))

    # --- steps and resets -----------------------------------------------------------

    def last_backward_before(self, site: Site) -> Optional[BackwardSite]:
        earlier = [b for b in self.loop_backwards if b.order < site.order]
        return earlier[-1] if earlier else None

    def resets_affecting(self, step: StepSite) -> List[ResetSite]:
        """Resets that clear the gradients `step` applies (its optimizer's, or its model's)."""
        models = dict(self.optimizer_models).get(step.receiver, frozenset())
        single_optimizer = len(self.optimizer_names) == 1
        affecting = []
        for reset in self.resets:
            if reset.kind == "helper":
                # `fast_zero_grad(model)`: a helper of this file that resets; whose gradients it reaches is
                # clear when it is handed this optimizer or its model, or when only one optimizer steps.
                passed = {dotted_name(arg.value) for arg in getattr(reset.node, "args", ())}
                if single_optimizer or step.receiver in passed or any(
                    _same_module(name, model) for name in passed if name for model in models
                ):
                    affecting.append(reset)
                continue
            if reset.kind != "zero_grad":
                continue
            if reset.target == step.receiver or any(_same_module(reset.target, model) for model in models):
                affecting.append(reset)
            elif not models and single_optimizer and reset.target not in self.optimizer_names:
                affecting.append(reset)
        return affecting

    def resets_for(self, optimizer: str) -> List[ResetSite]:
        """Resets that may clear `optimizer`'s gradients: a reset whose reach cannot be read counts.

        `netD.zero_grad()` does not reach `optimizerG = Adam(netG.parameters())`;
        `model.zero_grad()`, `p.grad = None` or a helper reach any optimizer whose
        parameters cannot be traced.
        """
        models = dict(self.optimizer_models).get(optimizer, frozenset())
        found = []
        for reset in self.resets:
            if reset.kind != "zero_grad" or reset.target == optimizer:
                found.append(reset)
            elif reset.target in self.optimizer_names:
                continue
            elif not models or any(_same_module(reset.target, model) for model in models):
                found.append(reset)
        return found

    def resets_wiping(self, step: StepSite) -> List[ResetSite]:
        """Resets between the last backward and `step`, on every path to it: the step applies zeros."""
        backward = self.last_backward_before(step)
        if backward is None:
            return []
        return [
            reset
            for reset in self.resets_affecting(step)
            if backward.order < reset.order < step.order and reset.depth == 0 and reset.runs_whenever(step)
        ]

    def in_accumulate_context(self, site: Site) -> bool:
        """Inside `with accelerator.accumulate(model):`, where the framework handles the window."""
        for item in self.outer_contexts + site.contexts:
            if isinstance(item, cst.Call) and isinstance(item.func, cst.Attribute) and item.func.attr.value == "accumulate":
                return True
        return False

    # --- the loop's surroundings --------------------------------------------------------

    def value_before_loop(self, name: str) -> Optional[cst.BaseExpression]:
        """The value `name` was last given before the loop, in the blocks around it."""
        return _value_before(self.enclosing, name)

    @property
    def first_body_statement(self) -> Optional[cst.CSTNode]:
        body = self.node.body
        return body.body[0] if isinstance(body, cst.IndentedBlock) and body.body else None

    def statements_after(self) -> Block:
        """The statements that follow the loop in its own block."""
        if not self.enclosing:
            return ()
        statements, index = self.enclosing[-1]
        return statements[index + 1:]

    def flushed_after(self, optimizer: str) -> bool:
        """`optimizer.step()` (or `scaler.step(optimizer)`) runs right after the loop."""
        for statement in self.statements_after():
            for call in _calls_in(statement):
                func = call.func
                if not isinstance(func, cst.Attribute) or func.attr.value != "step":
                    continue
                first = positional(call, 0)
                if dotted_name(func.value) == optimizer or (first is not None and dotted_name(first) == optimizer):
                    return True
        return False

    def used_as_tensor(self, name: str) -> bool:
        """`name.item()`, `name.backward()`... anywhere in the function (or module) around the loop."""
        if not self.enclosing:
            return False
        return any(_uses_attribute_of(statement, name) for statement in self.enclosing[0][0])

    # --- gradient mode -------------------------------------------------------------------

    def grad_disabled_at(self, site: Site, names: ModuleNames) -> Optional[cst.BaseExpression]:
        """The `no_grad()`/`inference_mode()` context or decorator in force at `site`, if any."""
        decorators = tuple(d.decorator for d in self.function.decorators) if self.function is not None else ()
        disabled = None
        for item in decorators + self.outer_contexts + site.contexts:
            mode = _grad_mode(item, names)
            if mode == "off":
                disabled = item
            elif mode == "on":
                disabled = None
        return disabled

    def computed_without_grad(self, backward: BackwardSite, names: ModuleNames) -> Optional[cst.BaseExpression]:
        """The context that disabled gradients while the backward's loss was computed, if any."""
        loss = backward.loss
        if loss is None:
            return None
        if dotted_name(loss) is None:  # an expression computed right in the backward call
            disabled = self.grad_disabled_at(backward, names)
            if disabled is not None:
                return disabled
        state, context = _GradTracer(self, names, backward).trace(loss, backward.order, 0)
        return context if state == "off" else None

    # --- history and state -----------------------------------------------------------------

    def history_accumulations(self, names: ModuleNames) -> List[Tuple[str, cst.BaseExpression, Assignment]]:
        """(total, added, update) for `total += loss` where `total` starts as a number before the loop."""
        backward_losses = {b.loss_name for b in self.backwards if b.loss_name}
        found = []
        for assignment in self.assignments:
            added = _added_term(assignment)
            total = assignment.target
            if added is None or total in backward_losses:
                continue
            if not isinstance(self.value_before_loop(total), (cst.Integer, cst.Float)):
                continue
            if self.grad_disabled_at(assignment, names) is not None:
                continue
            if self._attached_to_graph(added, assignment, names, backward_losses):
                found.append((total, added, assignment))
        return found

    def _attached_to_graph(self, added, assignment: Assignment, names: ModuleNames, backward_losses) -> bool:
        """A graph-attached tensor reaches `added` through arithmetic or graph-keeping tensor methods:
        `loss * x.size(0)`, `loss.mean()`; `loss.item() * n`, `float(loss)` and `loss.detach()` do not."""
        if isinstance(added, cst.BinaryOperation):
            return any(self._attached_to_graph(side, assignment, names, backward_losses)
                       for side in (added.left, added.right))
        if isinstance(added, cst.UnaryOperation):
            return self._attached_to_graph(added.expression, assignment, names, backward_losses)
        if (isinstance(added, cst.Call) and isinstance(added.func, cst.Attribute)
                and added.func.attr.value in _GRAPH_KEEPING_METHODS and names.qualify(added.func) is None):
            return self._attached_to_graph(added.func.value, assignment, names, backward_losses)
        if dotted_name(added) in backward_losses:
            return True
        origin = self.origin(added, assignment, names)
        return bool(origin.reductions) and origin.reductions <= {"mean", "sum", "none"}

    def graph_built_in_iteration(self, backward: BackwardSite) -> bool:
        """The backward's tensors are computed in this iteration, not before the loop.

        `for out in outputs: out.sum().backward(retain_graph=True)` walks one graph,
        built before the loop, once per iteration; `loss = f(model(x))` builds a new one.
        """
        if backward.loss is None:
            return False
        parts = backward.loss.elements if isinstance(backward.loss, (cst.List, cst.Tuple)) else (backward.loss,)
        for part in parts:
            root = _root_name(part.value if isinstance(part, cst.BaseElement) else part)
            if root is not None and not any(
                self.assignments_to(candidate, backward.order) for candidate in _prefixes(root)
            ):
                return False
        return True

    def is_fed_back_state(self, name: str) -> bool:
        """`h = rnn(x, h)`: the name's carried update is a call that takes it as input."""
        update = self.carried(name)
        return update is not None and _feeds_itself(update.value, name)

    def fed_back_states(self, names: ModuleNames) -> List[Assignment]:
        """Model outputs fed back as inputs next iteration, with their graph, into a backward."""
        feeding: Set[str] = set()
        for backward in self.loop_backwards:
            if backward.loss is not None:
                feeding |= self.feeding_names(backward.loss, backward.order)
        states = []
        seen: Set[str] = set()
        for assignment in self.assignments:
            name = assignment.target
            if name in seen or name not in feeding or assignment.depth != 0:
                continue
            seen.add(name)
            if not self.is_fed_back_state(name) or self.carried(name) is not assignment:
                continue
            if self.grad_disabled_at(assignment, names) is not None:
                continue
            if any(call.callee == f"{name}.detach_" and call.order < assignment.order for call in self.calls):
                continue
            if self._detached_with_backwards(name, assignment):
                continue
            states.append(assignment)
        return states

    def _detached_with_backwards(self, name: str, update: Assignment) -> bool:
        """`h = h.detach()` (or `repackage_hidden(h)`, `h.detach_()`) runs whenever a backward runs,
        as in truncated BPTT's `if (t + 1) % k == 0: loss.backward(); ...; h = h.detach()`."""
        detaches: List[Site] = [
            a for a in self.assignments
            if a.target == name and a is not update and a.depth == 0 and a.reads_target and _detaches(a.value)
        ]
        detaches += [call for call in self.calls if call.callee == f"{name}.detach_" and call.depth == 0]
        backwards = self.loop_backwards
        return bool(detaches and backwards) and all(
            any(detach.runs_whenever(backward) for detach in detaches) for backward in backwards
        )

    def state_is_tuple(self, state: Assignment, names: ModuleNames) -> bool:
        """The state comes from an `nn.LSTM`, whose hidden state is an `(h, c)` tuple."""
        value = state.value
        if not isinstance(value, cst.Call) or _nested_target(state.node, state.target):
            return False  # `out, (h, c) = lstm(...)` names each tensor of the tuple
        callee = dotted_name(value.func)
        constructors = names.constructors_of(callee) if callee else []
        return any(c.endswith(".LSTM") for c in constructors)

    # --- accumulation windows -------------------------------------------------------------

    def trailing_windows(self) -> List[Tuple[StepSite, AccumulationCheck, LoopCounter]]:
        """Steps whose accumulation condition cannot hold on the loop's last micro-batch."""
        found = []
        for step in self.optimizer_steps:
            if step.depth != 0 or not any(b.order < step.order for b in self.loop_backwards):
                continue
            for check in self.accumulation_checks(step):
                counter = self.counter(check.counter)
                if check.kind != "modulo" or check.remainder != "zero" or counter is None:
                    continue
                if counter.source not in ("enumerate", "range") or counter.value_at(step.order) is None:
                    continue
                if counter.endless or counter.value_at(step.order) + check.offset != 1:
                    continue
                if _mentions_end(check.guard.test, counter) or any(
                    _mentions_end(part, counter)
                    for other in _other_operands(check.guard.test, check.expression)
                    for part in self._expanded(other, step.order)
                ):
                    continue
                if _length_divides(counter, check.count, self.value_before_loop):
                    continue
                found.append((step, check, counter))
                break
        return found

    def _expanded(self, expression: cst.BaseExpression, before: int, limit: int = 8) -> List[cst.BaseExpression]:
        """`expression` and the values of the names it reads, followed back through the iteration and
        before the loop: `last_batch` -> `batch_idx == last_idx` -> `len(loader) - 1`."""
        found = [expression]
        pending = [(expression, before)]
        seen: Set[str] = set()
        while pending and len(found) < limit:
            node, order = pending.pop()
            for name in iter_names(node):
                if name in seen:
                    continue
                seen.add(name)
                assignments = self.assignments_to(name, order)
                if assignments:
                    values = [(a.value, a.order) for a in assignments if a.value is not None]
                else:
                    earlier = self.value_before_loop(name)
                    values = [(earlier, 0)] if earlier is not None else []
                for value, at in values:
                    found.append(value)
                    pending.append((value, at))
        return found


# Tensor methods whose result keeps the receiver's graph.
_TENSOR_METHODS = frozenset(
    {"mean", "sum", "view", "reshape", "flatten", "squeeze", "unsqueeze", "float", "to", "contiguous", "permute",
     "transpose", "chunk", "split", "softmax", "log_softmax"}
)


# Tensor methods whose result is still attached to the receiver's graph.
_GRAPH_KEEPING_METHODS = _TENSOR_METHODS | {"cpu", "cuda", "clone", "double", "half", "abs", "sqrt", "exp"}


def _value_names(node: cst.BaseExpression) -> List[str]:
    """Dotted names `node` reads as values: arguments and operands, not the callables it calls."""
    if isinstance(node, (cst.Name, cst.Attribute)):
        name = dotted_name(node)
        return [name] if name is not None else []
    if isinstance(node, cst.Call):
        found = [name for arg in node.args for name in _value_names(arg.value)]
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _TENSOR_METHODS:
            found += _value_names(func.value)
        return found
    return [name for part in _value_parts(node) for name in _value_names(part)]


def _value_parts(node: cst.CSTNode) -> List[cst.BaseExpression]:
    """The sub-expressions whose values flow into `node`: operands, elements, subscripted values."""
    if isinstance(node, cst.BinaryOperation):
        return [node.left, node.right]
    if isinstance(node, cst.UnaryOperation):
        return [node.expression]
    if isinstance(node, cst.Subscript):
        return [node.value]
    if isinstance(node, (cst.Tuple, cst.List)):
        return [element.value for element in node.elements]
    if isinstance(node, (cst.ListComp, cst.GeneratorExp)):
        return [node.elt]
    return []


def _same_module(a: str, b: str) -> bool:
    """`model` and `model.backbone` (or `model.module`) share parameters."""
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def _value_before(enclosing: Tuple[Tuple[Block, int], ...], name: str) -> Optional[cst.BaseExpression]:
    for statements, index in reversed(enclosing):
        for statement in reversed(statements[:index]):
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in reversed(statement.body):
                if isinstance(small, cst.Assign):
                    for target in small.targets:
                        if dotted_name(target.target) == name:
                            return small.value
                        unpacked = _unpacked_value(target.target, small.value, name)
                        if unpacked is not None:
                            return unpacked
                if isinstance(small, cst.AnnAssign) and dotted_name(small.target) == name:
                    return small.value
    return None


def _unpacked_value(target: cst.BaseExpression, value: cst.BaseExpression, name: str) -> Optional[cst.BaseExpression]:
    """`0.0` for `tr_loss` in `tr_loss, logging_loss = 0.0, 0.0`."""
    if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(value, (cst.Tuple, cst.List)):
        return None
    if len(target.elements) != len(value.elements):
        return None
    for element, part in zip(target.elements, value.elements):
        if dotted_name(element.value) == name:
            return part.value
    return None


def _uses_attribute_of(node: cst.CSTNode, name: str) -> bool:
    """`name.anything` somewhere in `node`."""
    return any(isinstance(part, cst.Attribute) and isinstance(part.value, cst.Name) and part.value.value == name
               for part in preorder(node))


def _grad_mode(item: cst.BaseExpression, names: ModuleNames) -> Optional[str]:
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


_DETACHING_CALLS = ("detach", "repackage", "tuple", "list")


def _feeds_itself(value: Optional[cst.BaseExpression], name: str) -> bool:
    """`rnn(x, h)`, `model(state)`, `lstm(x, (h, c))`: the name is passed straight back in."""
    if not isinstance(value, cst.Call):
        return False
    callee = dotted_name(value.func)
    if callee is None or any(word in last_component(callee).lower() for word in _DETACHING_CALLS):
        return False
    for arg in value.args:
        if isinstance(arg.value, (cst.Tuple, cst.List)):
            passed = [element.value for element in arg.value.elements]
        else:
            passed = [arg.value]
        if any(dotted_name(item) == name for item in passed):
            return True
    return False


def _nested_target(node: cst.CSTNode, name: str) -> bool:
    """`h` in `out, (h, c) = ...`: assigned from inside a nested tuple target."""
    if not isinstance(node, cst.Assign):
        return False
    for target in node.targets:
        if isinstance(target.target, (cst.Tuple, cst.List)):
            for element in target.target.elements:
                inner = element.value
                if isinstance(inner, (cst.Tuple, cst.List)) and name in {dotted_name(e.value) for e in inner.elements}:
                    return True
    return False


def _detaches(value: Optional[cst.BaseExpression]) -> bool:
    """`h.detach()`, `repackage_hidden(h)`, `tuple(s.detach() for s in h)`, `(h.detach(), c.detach())`,
    `[s.detach() for s in h]`."""
    if isinstance(value, (cst.Tuple, cst.List)):
        return bool(value.elements) and all(_detaches(element.value) for element in value.elements)
    if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
        return _detaches(value.elt)
    if not isinstance(value, cst.Call):
        return False
    if isinstance(value.func, cst.Attribute) and value.func.attr.value == "detach":  # `hidden[0].detach()`
        return True
    callee = last_component(dotted_name(value.func) or "").lower()
    return bool(callee) and any(word in callee for word in _DETACHING_CALLS)


def _root_name(node: cst.BaseExpression) -> Optional[str]:
    """`out` for `out[0].sum()`; None for a fresh call like `criterion(out, y)`."""
    while True:
        if isinstance(node, cst.Call):
            if not isinstance(node.func, cst.Attribute):
                return None
            node = node.func.value
        elif isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, (cst.Name, cst.Attribute)):
            return dotted_name(node)
        else:
            return None


def _prefixes(dotted: str) -> List[str]:
    """`a.b.c` -> [`a.b.c`, `a.b`, `a`]."""
    parts = dotted.split(".")
    return [".".join(parts[:end]) for end in range(len(parts), 0, -1)]


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


def _other_operands(test: cst.BaseExpression, check: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The parts of `(i + 1) % n == 0 or last_batch` besides the window check: `[last_batch]`."""
    if test is check:
        return []
    if isinstance(test, cst.BooleanOperation):
        return _other_operands(test.left, check) + _other_operands(test.right, check)
    return [test]


def _mentions_len(test: cst.BaseExpression) -> bool:
    return any(dotted_name(call.func) == "len" for call in _calls_in(test))


def _mentions_end(test: cst.BaseExpression, counter: LoopCounter) -> bool:
    """The condition names the loop's end: `len(loader)`, or `n` in `for b in range(1, n + 1)`."""
    if _mentions_len(test):
        return True
    iterable = counter.iterable
    if not isinstance(iterable, cst.Call) or dotted_name(iterable.func) != "range":
        return False
    stop = positional(iterable, 1) or positional(iterable, 0)
    ends = [stop] if stop is not None else []
    if isinstance(stop, cst.BinaryOperation) and isinstance(stop.operator, cst.Add) and int_value(stop.right) == 1:
        ends.append(stop.left)
    return any(_contains(test, end) for end in ends)


def _contains(tree: cst.CSTNode, part: cst.CSTNode) -> bool:
    if tree.deep_equals(part):
        return True
    return any(_contains(child, part) for child in children(tree))


def _rebound_around(loop: Loop, name: str, node: cst.CSTNode) -> bool:
    """`node` lies in a `for` nested in `loop` whose target rebinds `name`."""
    pending: List[cst.CSTNode] = list(_block_statements(loop))
    while pending:
        statement = pending.pop()
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(statement, cst.For) and name in _target_names(statement.target) and _contains(statement, node):
            return True
        pending.extend(child for child in children(statement) if isinstance(child, _STATEMENT_PARTS))
    return False


_STATEMENT_PARTS = (cst.BaseCompoundStatement, cst.BaseSuite, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler,
                    cst.Finally, cst.MatchCase)


def _target_names(target: cst.BaseExpression) -> List[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _target_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    name = dotted_name(target)
    return [name] if name is not None else []


def _length_divides(counter: LoopCounter, count: cst.BaseExpression, value_before=None) -> bool:
    """`range(64)` with `N = 8`, or `range(N * updates)`: the window always closes on the last micro-batch."""
    iterable = counter.iterable
    if not isinstance(iterable, cst.Call) or dotted_name(iterable.func) != "range":
        return False
    stop = positional(iterable, 0) if len(iterable.args) == 1 else None
    if isinstance(stop, cst.Name) and value_before is not None:
        stop = value_before(stop.value) or stop  # `total = updates * accum` before the loop
    if isinstance(stop, cst.BinaryOperation) and isinstance(stop.operator, cst.Multiply):
        if stop.left.deep_equals(count) or stop.right.deep_equals(count):
            return True
    n = int_value(count)
    if n is None:
        return False
    bounds = [int_value(arg.value) for arg in iterable.args]
    if len(bounds) == 1 and bounds[0] is not None:
        return bounds[0] % n == 0
    if len(bounds) == 2 and None not in bounds:
        return (bounds[1] - bounds[0]) % n == 0
    return False


def _is_detach(value: Optional[cst.BaseExpression], name: str) -> bool:
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value in ("detach", "item")
        and dotted_name(value.func.value) == name
    )


# --- accumulation conditions ----------------------------------------------------


def _accumulation_checks(
    test: cst.BaseExpression, guard: Guard, holds: bool = True
) -> Iterable[AccumulationCheck]:
    """Checks in `test`; `holds` is False when the step runs where `test` is false."""
    if isinstance(test, cst.BooleanOperation):
        yield from _accumulation_checks(test.left, guard, holds)
        yield from _accumulation_checks(test.right, guard, holds)
        return
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        if _is_modulo(test.expression) and holds:
            yield _modulo_check(test, test.expression, "zero", guard)
        else:
            yield from _accumulation_checks(test.expression, guard, not holds)
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
        if counter is not None and not _is_number(right):
            yield AccumulationCheck("count", test, left, counter, 0, right, "count", guard, not holds)
        elif counter is not None and int_value(right) is not None and int_value(right) > 1:
            yield AccumulationCheck("count", test, left, counter, 0, right, "count", guard, not holds)


def _is_modulo(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo)


def _is_number(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Integer, cst.Float))


def _remainder_kind(modulo: cst.BinaryOperation, other: cst.BaseExpression) -> str:
    if int_value(other) == 0:
        return "zero"
    if (
        isinstance(other, cst.BinaryOperation)
        and isinstance(other.operator, cst.Subtract)
        and int_value(other.right) == 1
        and _same_code(other.left, modulo.right)
    ):
        return "last"
    count = int_value(modulo.right)
    if count is not None and int_value(other) == count - 1:
        return "last"
    return "other"


def _same_code(a: cst.CSTNode, b: cst.CSTNode) -> bool:
    return a.deep_equals(b)


def _modulo_check(
    expression: cst.BaseExpression, modulo: cst.BinaryOperation, remainder: str, guard: Guard, negated: bool = False
) -> AccumulationCheck:
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


# --- where a loss comes from -------------------------------------------------------


class _OriginTracer:
    _MAX_DEPTH = 12

    def __init__(self, loop: TrainingLoop, names: ModuleNames, use: Site) -> None:
        self.loop = loop
        self.names = names
        self.use = use

    def trace(self, node: cst.BaseExpression, before: int, depth: int) -> LossOrigin:
        if depth > self._MAX_DEPTH:
            return LossOrigin(reductions=frozenset({"unknown"}))
        depth += 1
        if _is_number(node):
            return LossOrigin()
        if isinstance(node, cst.BinaryOperation):
            return self._binary(node, before, depth)
        if isinstance(node, cst.UnaryOperation):
            return self.trace(node.expression, before, depth)
        if isinstance(node, cst.Call):
            return self._call(node, before, depth)
        if isinstance(node, cst.Attribute) and node.attr.value == "loss":
            return LossOrigin(reductions=frozenset({"mean"}), sources=(dotted_name(node) or "outputs.loss",))
        name = dotted_name(node)
        if name is not None:
            return self._name(name, before, depth)
        return LossOrigin(reductions=frozenset({"unknown"}))

    def _binary(self, node: cst.BinaryOperation, before: int, depth: int) -> LossOrigin:
        operator = node.operator
        if isinstance(operator, (cst.Divide, cst.FloorDivide)):
            left = self.trace(node.left, before, depth)
            return LossOrigin(True, left.reductions, left.sources)
        if isinstance(operator, cst.Multiply):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                if self._is_reciprocal(side, before):
                    traced = self.trace(other, before, depth)
                    return LossOrigin(True, traced.reductions, traced.sources)
        return self.trace(node.left, before, depth).merge(self.trace(node.right, before, depth))

    def _is_reciprocal(self, node: cst.BaseExpression, before: int) -> bool:
        """`1 / n`, or a name holding it: `loss_scale = 1.0 / accum` in the loop or before it."""
        if _is_reciprocal(node):
            return True
        name = dotted_name(node)
        if name is None:
            return False
        assignments = self.loop.assignments_to(name, before)
        value = assignments[-1].value if assignments else self.loop.value_before_loop(name)
        return value is not None and _is_reciprocal(value)

    def _call(self, node: cst.Call, before: int, depth: int) -> LossOrigin:
        func = node.func
        qualified = self.names.callee(node)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = func.value
            if method in ("div", "div_", "true_divide"):
                traced = self.trace(receiver, before, depth)
                return LossOrigin(True, traced.reductions, traced.sources)
            if method in ("mean", "sum") and qualified is None:
                traced = self.trace(receiver, before, depth)
                if "none" in traced.reductions:
                    return LossOrigin(traced.divided, (traced.reductions - {"none"}) | {method}, traced.sources)
                return traced
            if method in ("float", "to", "cuda", "squeeze", "clone", "contiguous", "double", "half"):
                return self.trace(receiver, before, depth)
        if qualified in ("torch.div", "torch.true_divide"):
            first = positional(node, 0)
            traced = self.trace(first, before, depth) if first is not None else LossOrigin()
            return LossOrigin(True, traced.reductions, traced.sources)
        if qualified in ("torch.mean", "torch.sum") and positional(node, 0) is not None:
            traced = self.trace(positional(node, 0), before, depth)
            kind = last_component(qualified)
            return LossOrigin(traced.divided, (traced.reductions - {"none"}) | {kind}, traced.sources)
        if qualified is not None and self.names.is_loss_function(qualified):
            return LossOrigin(reductions=frozenset({_reduction(node)}), sources=(dotted_name(func) or qualified,))
        if isinstance(func, cst.Call):
            constructor = self.names.callee(func)
            if constructor is not None and self.names.is_loss_class(constructor):
                return LossOrigin(reductions=frozenset({_reduction(func)}), sources=(dotted_name(func.func) or "",))
        callee = dotted_name(func)
        if callee is not None:
            reductions = set()
            for value in self.names.values_of(callee):
                if isinstance(value, cst.Call):
                    constructor = self.names.callee(value)
                    if constructor is not None and self.names.is_loss_class(constructor):
                        reductions.add(_reduction(value))
            if reductions:
                return LossOrigin(reductions=frozenset(reductions), sources=(callee,))
        return LossOrigin(reductions=frozenset({"unknown"}), sources=(callee or "a call",))

    def _name(self, name: str, before: int, depth: int) -> LossOrigin:
        result = LossOrigin()
        for assignment in reversed(self.loop.assignments_to(name, before)):
            value = assignment.value
            if value is None:
                continue
            if assignment.operator in ("/=", "//="):
                result = result.merge(LossOrigin(divided=True))
                continue
            if assignment.operator == "*=" and self._is_reciprocal(value, assignment.order):
                result = result.merge(LossOrigin(divided=True))
                continue
            if assignment.operator in ("+=", "-=", "*="):
                result = result.merge(self.trace(value, assignment.order, depth))
                continue
            if assignment.operator != "=":
                continue
            result = result.merge(self.trace(value, assignment.order, depth))
            # A plain assignment that runs whenever the loss is used ends the trace;
            # one under a narrower `if` may be skipped, so earlier values count too.
            if assignment.reads_target or assignment.runs_whenever(self.use):
                return result
        return result.merge(LossOrigin(reductions=frozenset({"outside"})))


# Tensor methods that compute from their receiver and arguments only, with no parameters of their own.
_PURE_TENSOR_METHODS = _TENSOR_METHODS | {
    "cpu", "cuda", "clone", "double", "half", "abs", "sqrt", "exp", "log", "pow", "gather", "argmax", "max", "min",
    "norm", "clamp", "squeeze", "expand", "expand_as", "view_as", "mul", "add", "sub", "neg", "sigmoid", "tanh",
}


class _GradTracer:
    """Whether a loss carries no graph because what it is computed from was computed with gradients off.

    `trace` answers ("off", context) when every input that could carry a graph was computed under a
    `no_grad()`-like `context` (and the rest are data or numbers), ("none", None) for data and numbers
    only, and ("maybe", None) as soon as anything could carry a graph: a model call, an unknown callable,
    a name the loop does not assign. When unsure, the answer is "maybe", and nothing is reported.
    """

    _MAX_DEPTH = 12

    def __init__(self, loop: TrainingLoop, names: ModuleNames, use: Site) -> None:
        self.loop = loop
        self.names = names
        self.use = use
        self.data: Set[str] = set()
        node = loop.node
        if isinstance(node, cst.For) and not any(
            loop.value_before_loop(name) is not None and loop._builds_graph(loop.value_before_loop(name), names, 0)
            for name in iter_names(node.iter)
        ):  # `for x, y in loader`: data; not `for out in outputs` over a forward pass before the loop
            self.data = set(iter_names(node.target))

    def trace(self, node: cst.BaseExpression, before: int, depth: int) -> Tuple[str, Optional[cst.BaseExpression]]:
        if depth > self._MAX_DEPTH:
            return "maybe", None
        depth += 1
        if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)):
            return "none", None
        if isinstance(node, (cst.Name, cst.Attribute)) and dotted_name(node) is not None:
            return self._name(dotted_name(node), before, depth)
        if isinstance(node, cst.Subscript):
            return self.trace(node.value, before, depth)
        if isinstance(node, cst.BinaryOperation):
            return self._combine([self.trace(node.left, before, depth), self.trace(node.right, before, depth)])
        if isinstance(node, cst.UnaryOperation):
            return self.trace(node.expression, before, depth)
        if isinstance(node, cst.Call):
            return self._call(node, before, depth)
        return "maybe", None

    def _call(self, node: cst.Call, before: int, depth: int) -> Tuple[str, Optional[cst.BaseExpression]]:
        args = [self.trace(arg.value, before, depth) for arg in node.args]
        func = node.func
        qualified = self.names.callee(node)
        if qualified is not None:
            pure = qualified.startswith("torch.") and (
                not qualified.startswith("torch.nn.") or qualified.startswith("torch.nn.functional.")
            )
            return self._combine(args) if pure else ("maybe", None)
        if isinstance(func, cst.Name) and func.value in ("float", "int", "len"):
            return "none", None
        if isinstance(func, cst.Attribute) and func.attr.value in _PURE_TENSOR_METHODS:
            return self._combine([self.trace(func.value, before, depth)] + args)
        callee = dotted_name(func)
        if callee is not None and any(
            self.names.is_loss_class(c) for c in self.names.constructors_of(callee)
        ):  # `criterion = nn.CrossEntropyLoss()`: no parameters of its own
            return self._combine(args)
        return "maybe", None

    def _name(self, name: str, before: int, depth: int) -> Tuple[str, Optional[cst.BaseExpression]]:
        if name in self.data:
            return "none", None
        for candidate in _prefixes(name):  # `outputs.loss`, then `outputs`
            assignments = self.loop.assignments_to(candidate, before)
            if not assignments:
                continue
            last = assignments[-1]
            if not last.runs_whenever(self.use):  # under a narrower `if`: an earlier value may reach the use
                return "maybe", None
            disabled = self.loop.grad_disabled_at(last, self.names)
            if disabled is not None:
                return "off", disabled
            if last.value is None or last.operator != "=":
                return "maybe", None
            return self.trace(last.value, last.order, depth)
        if _is_number(self.loop.value_before_loop(name)) or self._numeric_parameter(name):
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
                return default is not None and (_is_number(default) or int_value(default) is not None)
        return False

    @staticmethod
    def _combine(parts) -> Tuple[str, Optional[cst.BaseExpression]]:
        if any(state == "maybe" for state, _ in parts):
            return "maybe", None
        for state, context in parts:
            if state == "off":
                return state, context
        return "none", None


def _is_reciprocal(node: cst.BaseExpression) -> bool:
    return (
        isinstance(node, cst.BinaryOperation)
        and isinstance(node.operator, cst.Divide)
        and isinstance(node.left, (cst.Integer, cst.Float))
        and float(node.left.value) == 1.0
    )


def _reduction(call: cst.Call) -> str:
    value = string_value(keyword(call, "reduction"))
    if value in ("sum", "none", "mean"):
        return value
    size_average, reduce = keyword(call, "size_average"), keyword(call, "reduce")
    if isinstance(size_average, cst.Name) and size_average.value == "False":
        return "sum"
    if isinstance(reduce, cst.Name) and reduce.value == "False":
        return "none"
    return "mean" if value is None else "unknown"


# --- building the facts -------------------------------------------------------------


def find_training_loops(module: cst.Module, names: ModuleNames) -> List[TrainingLoop]:
    finder = _LoopFinder(names)
    finder.walk(_block_statements(module), (), None, None)
    return finder.loops


def _block_statements(owner: cst.CSTNode) -> Block:
    body = getattr(owner, "body", None)
    if isinstance(owner, cst.Module):
        return owner.body
    if isinstance(body, cst.IndentedBlock):
        return body.body
    if isinstance(body, cst.SimpleStatementSuite):
        return (body,)
    return ()


def _children_blocks(statement: cst.CSTNode) -> List[Tuple[cst.CSTNode, Optional[Tuple[cst.BaseExpression, bool]]]]:
    """The owners of the blocks nested in a compound statement, with the guard each adds."""
    if isinstance(statement, cst.If):
        blocks: List = [(statement, (statement.test, False))]
        orelse = statement.orelse
        if isinstance(orelse, cst.If):
            blocks.append((orelse, "elif"))
        elif isinstance(orelse, cst.Else):
            blocks.append((orelse, (statement.test, True)))
        return blocks
    if isinstance(statement, (cst.For, cst.While)):
        blocks = [(statement, None)]
        if statement.orelse is not None:
            blocks.append((statement.orelse, None))
        return blocks
    if isinstance(statement, cst.With):
        return [(statement, None)]
    if isinstance(statement, (cst.Try, cst.TryStar)):
        blocks = [(statement, None)]
        blocks.extend((handler, None) for handler in statement.handlers)
        if statement.orelse is not None:
            blocks.append((statement.orelse, None))
        if statement.finalbody is not None:
            blocks.append((statement.finalbody, None))
        return blocks
    if isinstance(statement, cst.Match):
        return [(case, (statement.subject, False)) for case in statement.cases]
    return []


class _LoopFinder:
    def __init__(self, names: ModuleNames) -> None:
        self.names = names
        self.loops: List[TrainingLoop] = []

    def walk(
        self,
        statements: Block,
        chain: Tuple[Tuple[Block, int], ...],
        function: Optional[cst.FunctionDef],
        class_def: Optional[cst.ClassDef],
        contexts: Tuple[cst.BaseExpression, ...] = (),
        top: Optional[cst.CSTNode] = None,
    ) -> None:
        for index, statement in enumerate(statements):
            here = chain + ((statements, index),)
            top_here = top if top is not None else statement
            if isinstance(statement, (cst.For, cst.While)) and _calls_backward_directly(statement, self.names):
                builder = _LoopBuilder(self.names, statement, function, class_def, here, contexts)
                self.loops.append(replace(builder.build(), top_statement=top_here))
            if isinstance(statement, cst.FunctionDef):
                self.walk(_block_statements(statement), (), statement, class_def, (), top_here)
            elif isinstance(statement, cst.ClassDef):
                self.walk(_block_statements(statement), (), None, statement, (), top_here)
            else:
                inner = contexts
                if isinstance(statement, cst.With):
                    inner = contexts + tuple(item.item for item in statement.items)
                for owner, _ in _children_blocks(statement):
                    if owner is statement or not isinstance(owner, cst.If):
                        self.walk(_block_statements(owner), here, function, class_def, inner, top_here)
                    else:
                        self.walk((owner,), here, function, class_def, inner, top_here)


def _calls_backward_directly(loop: Loop, names: ModuleNames) -> bool:
    stack: List = list(_block_statements(loop))
    while stack:
        statement = stack.pop()
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            if any(_classify_backward(call, names) is not None for call in _calls_in(statement)):
                return True
        elif isinstance(statement, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef)):
            continue
        elif isinstance(statement, cst.If):
            stack.extend(_block_statements(statement))
            if statement.orelse is not None:
                stack.append(statement.orelse)
        elif isinstance(statement, cst.Else):
            stack.extend(_block_statements(statement))
        else:
            for owner, _ in _children_blocks(statement):
                stack.extend(_block_statements(owner))
    return False


def _calls_in(node: cst.CSTNode) -> List[cst.Call]:
    return calls_in(node)


def _classify_backward(call: cst.Call, names: ModuleNames) -> Optional[Tuple[str, Optional[cst.BaseExpression], Optional[str]]]:
    """(kind, loss expression, framework receiver) for a backward-like call."""
    func = call.func
    qualified = names.callee(call)
    if qualified in ("torch.autograd.backward",):
        return "autograd", positional(call, 0) or keyword(call, "tensors"), None
    if qualified in ("torch.distributed.autograd.backward",):
        return "autograd", positional(call, 1) or keyword(call, "roots"), None
    if qualified in ("torch.autograd.grad",):
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
    if owner is not None and positional(call, 0) is not None and _is_framework(owner, names):
        return "framework", positional(call, 0), owner
    return "tensor", receiver, None


def _is_framework(owner: str, names: ModuleNames) -> bool:
    short = last_component(owner).lower()
    if any(word in short for word in _FRAMEWORK_BACKWARD_OWNERS):
        return True
    return any(c.startswith(_FRAMEWORK_CLASSES) for c in names.constructors_of(owner))


def _retain_graph_arg(call: cst.Call, kind: str) -> Optional[cst.Arg]:
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


class _LoopBuilder:
    def __init__(
        self,
        names: ModuleNames,
        loop: Loop,
        function: Optional[cst.FunctionDef],
        class_def: Optional[cst.ClassDef],
        enclosing: Tuple[Tuple[Block, int], ...],
        outer_contexts: Tuple[cst.BaseExpression, ...] = (),
    ) -> None:
        self.names = names
        self.outer_contexts = outer_contexts
        self.loop = loop
        self.function = function
        self.class_def = class_def
        self.enclosing = enclosing
        self.order = 0
        self.backwards: List[BackwardSite] = []
        self.steps: List[StepSite] = []
        self.resets: List[ResetSite] = []
        self.calls: List[CallSite] = []
        self.assignments: List[Assignment] = []

    def build(self) -> TrainingLoop:
        self._walk(_block_statements(self.loop), (), (), 0)
        draft = TrainingLoop(
            node=self.loop,
            function=self.function,
            class_def=self.class_def,
            enclosing=self.enclosing,
            backwards=tuple(self.backwards),
            steps=tuple(self.steps),
            resets=tuple(self.resets),
            calls=tuple(self.calls),
            assignments=tuple(self.assignments),
            counters=(),
        )
        receivers = {step.receiver for step in self.steps}
        optimizers = frozenset(r for r in receivers if self._is_optimizer(r, draft))
        schedulers = frozenset(r for r in receivers - optimizers if self._is_scheduler(r))
        models = tuple((optimizer, self._optimized_models(optimizer)) for optimizer in sorted(optimizers))
        scheduled = tuple(
            (scheduler, optimizer) for scheduler in sorted(schedulers)
            for optimizer in [self._scheduled_optimizer(scheduler, optimizers)] if optimizer is not None
        )
        return TrainingLoop(
            **{**draft.__dict__, "counters": tuple(self._counters(draft)),
               "optimizer_names": optimizers, "scheduler_names": schedulers,
               "outer_contexts": self.outer_contexts, "optimizer_models": models,
               "scheduled_optimizers": scheduled}
        )

    def _scheduled_optimizer(self, scheduler: str, optimizers: FrozenSet[str]) -> Optional[str]:
        """`opt_g` for `sched_g = ExponentialLR(opt_g, gamma=...)`, when it is one of the loop's optimizers."""
        for value in self.names.values_of(scheduler):
            if not isinstance(value, cst.Call):
                continue
            passed = positional(value, 0) or keyword(value, "optimizer")
            name = dotted_name(passed) if passed is not None else None
            if name is None:
                continue
            for optimizer in optimizers:
                if optimizer == name or optimizer in self.names.aliases_of(name):
                    return optimizer
        return None

    def _optimized_models(self, optimizer: str) -> FrozenSet[str]:
        """`model` for `optimizer = SGD(model.parameters())`; empty when it cannot be read."""
        models: Set[str] = set()
        for value in self.names.values_of(optimizer):
            if not isinstance(value, cst.Call):
                continue
            for call in _calls_in(value):
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value in ("parameters", "named_parameters"):
                    owner = dotted_name(func.value)
                    if owner is not None:
                        # `self.model = model` / `model = DDP(model)`: the same parameters by another name.
                        models |= self.names.aliases_of(owner)
        return frozenset(models)

    # --- walking the body -----------------------------------------------------------

    def _walk(self, statements: Block, guards: Tuple[Guard, ...], contexts: Tuple, depth: int) -> None:
        for statement in statements:
            if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                for small in statement.body:
                    self._small_statement(small, statement, guards, contexts, depth)
            elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                continue
            elif isinstance(statement, cst.If):
                self._record_calls(statement.test, statement, guards, contexts, depth)
                self._walk(_block_statements(statement), guards + (Guard(statement.test, False, statement),),
                           contexts, depth)
                orelse = statement.orelse
                if orelse is not None:
                    negated = guards + (Guard(statement.test, True, statement),)
                    if isinstance(orelse, cst.If):
                        self._walk((orelse,), negated, contexts, depth)
                    else:
                        self._walk(_block_statements(orelse), negated, contexts, depth)
                elif _ends_in_continue(statement):
                    # `if (i + 1) % n != 0: continue` guards everything after it, like an `else`.
                    guards = guards + (Guard(statement.test, True, statement, after_continue=True),)
            elif isinstance(statement, cst.With):
                for item in statement.items:
                    self._record_calls(item.item, statement, guards, contexts, depth)
                inner = contexts + tuple(item.item for item in statement.items)
                self._walk(_block_statements(statement), guards, inner, depth)
            elif isinstance(statement, (cst.For, cst.While)):
                header = statement.iter if isinstance(statement, cst.For) else statement.test
                self._record_calls(header, statement, guards, contexts, depth)
                self._walk(_block_statements(statement), guards, contexts, depth + 1)
                if statement.orelse is not None:
                    self._walk(_block_statements(statement.orelse), guards, contexts, depth + 1)
            else:
                for owner, guard in _children_blocks(statement):
                    extra = (Guard(guard[0], guard[1], owner),) if isinstance(guard, tuple) else ()
                    self._walk(_block_statements(owner), guards + extra, contexts, depth)

    def _next(self) -> int:
        self.order += 1
        return self.order

    def _record_calls(self, node: cst.CSTNode, statement: cst.CSTNode, guards, contexts, depth: int) -> None:
        for call in _calls_in(node):
            self._call(call, statement, guards, contexts, depth)

    def _small_statement(self, small, statement, guards, contexts, depth: int) -> None:
        self._record_calls(small, statement, guards, contexts, depth)
        common = dict(statement=statement, guards=guards, contexts=contexts, depth=depth)
        if isinstance(small, cst.Assign):
            for target in small.targets:
                self._assign(target.target, "=", small.value, small, common)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            self._assign(small.target, "=", small.value, small, common)
        elif isinstance(small, cst.AugAssign):
            operator = small.operator.__class__.__name__
            symbol = _AUGMENTED.get(operator, "?=")
            self._assign(small.target, symbol, small.value, small, common)

    def _assign(self, target, operator: str, value, node, common) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                # `out, (h, c) = lstm(x, (h, c))`: nested targets are assigned too.
                inner = element.value
                if isinstance(inner, (cst.Tuple, cst.List)):
                    self._assign(inner, operator, value, node, common)
                    continue
                name = dotted_name(inner)
                if name is not None:
                    self.assignments.append(Assignment(self._next(), node, target=name, operator=operator,
                                                       value=value, **common))
            return
        if isinstance(target, cst.Attribute) and target.attr.value == "grad" and _is_none(value):
            self.resets.append(ResetSite(self._next(), node, target=dotted_name(target.value) or "",
                                         kind="grad = None", **common))
        name = dotted_name(target)
        if name is not None:
            self.assignments.append(Assignment(self._next(), node, target=name, operator=operator, value=value,
                                               **common))

    def _call(self, call: cst.Call, statement, guards, contexts, depth: int) -> None:
        common = dict(statement=statement, guards=guards, contexts=contexts, depth=depth)
        backward = _classify_backward(call, self.names)
        if backward is not None:
            kind, loss, receiver = backward
            create = keyword(call, "create_graph")
            self.backwards.append(
                BackwardSite(self._next(), call, loss=loss, kind=kind, retain_graph=_retain_graph_arg(call, kind),
                             create_graph=is_true(create), receiver=receiver, **common)
            )
            return
        func = call.func
        callee = dotted_name(func)
        self.calls.append(CallSite(self._next(), call, callee=callee, **common))
        if not isinstance(func, cst.Attribute):
            if callee is not None and self._helper_resets(callee):
                self.resets.append(ResetSite(self._next(), call, target=callee, kind=self._helper_kind(callee),
                                             **common))
            return
        method = func.attr.value
        receiver = dotted_name(func.value)
        if method == "step":
            scaled = positional(call, 0)
            if receiver is not None and scaled is not None and self._is_scaler(receiver):
                self.steps.append(StepSite(self._next(), call, receiver=dotted_name(scaled) or "", via_scaler=True,
                                           **common))
            elif receiver is not None:
                self.steps.append(StepSite(self._next(), call, receiver=receiver, **common))
        elif method == "zero_grad":
            self.resets.append(ResetSite(self._next(), call, target=receiver or "", kind="zero_grad", **common))
        elif method in ("zero_", "detach_") and isinstance(func.value, cst.Attribute) and _ends_in_grad(func.value):
            self.resets.append(ResetSite(self._next(), call, target=receiver or "", kind="grad.zero_()", **common))
        elif callee is not None and callee.startswith("self.") and self._helper_resets(callee[5:]):
            self.resets.append(ResetSite(self._next(), call, target=callee, kind=self._helper_kind(callee[5:]),
                                         **common))

    # --- what the receivers are -------------------------------------------------------

    def _is_scaler(self, receiver: str) -> bool:
        if "scaler" in last_component(receiver).lower():
            return True
        return any(c in GRAD_SCALERS for c in self.names.constructors_of(receiver))

    def _is_scheduler(self, receiver: str) -> bool:
        if any(self.names.is_scheduler_class(c) for c in self.names.constructors_of(receiver)):
            return True
        return "sched" in last_component(receiver).lower()

    def _is_optimizer(self, receiver: str, loop: TrainingLoop) -> bool:
        constructors = self.names.constructors_of(receiver)
        if any(self.names.is_scheduler_class(c) for c in constructors):
            return False
        if any(self.names.is_optimizer_class(c) for c in constructors) or any(
            c.endswith("Optimizer") for c in constructors
        ):
            return True
        for value in self.names.values_of(receiver):
            if isinstance(value, cst.Call) and (dotted_name(value.func) or "").endswith(".optimizers"):
                return True
        if any(step.receiver == receiver and step.via_scaler for step in loop.steps):
            return True
        if any(reset.target == receiver and reset.kind == "zero_grad" for reset in loop.resets):
            return True
        if self.function is not None and receiver in _zero_grad_receivers(self.function):
            return True
        short = last_component(receiver).lower()
        if "sched" in short:
            return False
        return "optim" in short or short in ("opt", "optim") or short.startswith("opt_") or short.endswith("_opt")

    def _helper_kind(self, name: str) -> str:
        """"helper" when the helper always resets; "helper-maybe" when its reset sits under an `if`."""
        for function in self.names.functions.get(name, ()):
            if function is not self.function and _resets_unconditionally(_block_statements(function), 0):
                return "helper"
        return "helper-maybe"

    def _helper_resets(self, name: str) -> bool:
        for function in self.names.functions.get(name, ()):
            if function is self.function:
                continue
            if _function_resets(function):
                return True
        return False

    # --- counters -------------------------------------------------------------------

    def _counters(self, loop: TrainingLoop) -> List[LoopCounter]:
        counters: List[LoopCounter] = []
        if isinstance(self.loop, cst.For):
            counter = self._header_counter(self.loop)
            if counter is not None:
                counters.append(counter)
        for assignment in loop.assignments:
            # A counter bumped after `if skip: continue` still counts the micro-batches trained on.
            guarded = any(not guard.after_continue for guard in assignment.guards)
            if assignment.depth != 0 or guarded or not _is_increment(assignment):
                continue
            if any(c.name == assignment.target for c in counters):
                continue
            start = self._initial_value(assignment.target)
            counters.append(LoopCounter(assignment.target, start, "manual", assignment, None))
        return counters

    def _header_counter(self, loop: cst.For) -> Optional[LoopCounter]:
        iterable = _unwrap(loop.iter, self.names)
        if isinstance(iterable, cst.Name):
            # `pbar = tqdm(enumerate(loader), total=len(loader))` then `for i, batch in pbar:`.
            earlier = _value_before(self.enclosing, iterable.value)
            if earlier is not None:
                iterable = _unwrap(earlier, self.names)
        if not isinstance(iterable, cst.Call):
            return None
        callee = dotted_name(iterable.func) or ""
        qualified = self.names.callee(iterable) or callee
        short = last_component(callee)
        target = loop.target
        if short == "enumerate":
            if not isinstance(target, (cst.Tuple, cst.List)) or not target.elements:
                return None
            name = dotted_name(target.elements[0].value)
            start_node = positional(iterable, 1) or keyword(iterable, "start")
            start = 0 if start_node is None else int_value(start_node)
            counted = positional(iterable, 0)
            counted = _unwrap(counted, self.names) if counted is not None else None
            endless = isinstance(counted, cst.Call) and self.names.callee(counted) in _ENDLESS_ITERATORS
            return LoopCounter(name, start, "enumerate", None, iterable, counted, endless) if name else None
        name = dotted_name(target)
        if name is None:
            return None
        if short == "range" and callee == "range":
            first = positional(iterable, 0)
            start = 0 if positional(iterable, 1) is None else int_value(first)
            return LoopCounter(name, start, "range", None, iterable, iterable)
        if qualified == "itertools.count" or callee == "count":
            first = positional(iterable, 0) or keyword(iterable, "start")
            return LoopCounter(name, 0 if first is None else int_value(first), "count", None, iterable)
        return None

    def _initial_value(self, name: str) -> Optional[int]:
        return int_value(_value_before(self.enclosing, name))


_AUGMENTED = {
    "AddAssign": "+=", "SubtractAssign": "-=", "MultiplyAssign": "*=", "DivideAssign": "/=",
    "FloorDivideAssign": "//=", "ModuloAssign": "%=", "PowerAssign": "**=", "MatrixMultiplyAssign": "@=",
    "BitOrAssign": "|=", "BitAndAssign": "&=", "BitXorAssign": "^=", "LeftShiftAssign": "<<=",
    "RightShiftAssign": ">>=",
}


def _ends_in_continue(statement: cst.If) -> bool:
    body = _block_statements(statement)
    last = body[-1] if body else None
    return isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and isinstance(
        last.body[-1], cst.Continue
    )


def _is_none(node: Optional[cst.BaseExpression]) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _ends_in_grad(node: cst.Attribute) -> bool:
    """`p.grad` or `p.grad.data`."""
    if node.attr.value == "grad":
        return True
    return node.attr.value == "data" and isinstance(node.value, cst.Attribute) and node.value.attr.value == "grad"


def _is_increment(assignment: Assignment) -> bool:
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


def _unwrap(node: cst.BaseExpression, names: ModuleNames) -> cst.BaseExpression:
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


class _ResetFinder:
    """Resets in a statement: `x.zero_grad()`, `p.grad.zero_()`/`.detach_()`, `p.grad = None`."""

    def __init__(self) -> None:
        self.found = False
        self.zero_grad_receivers: Set[str] = set()

    def scan(self, node: cst.CSTNode) -> "_ResetFinder":
        for part in preorder(node):
            if isinstance(part, cst.Call):
                self._call(part)
            elif isinstance(part, cst.Assign):
                self._assign(part)
        return self

    def _call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute):
            if func.attr.value == "zero_grad":
                self.found = True
                receiver = dotted_name(func.value)
                if receiver:
                    self.zero_grad_receivers.add(receiver)
            elif func.attr.value in ("zero_", "detach_") and isinstance(func.value, cst.Attribute) and _ends_in_grad(
                func.value
            ):
                self.found = True

    def _assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Attribute) and target.target.attr.value == "grad" and _is_none(node.value):
                self.found = True


def _resets_unconditionally(statements: Block, depth: int) -> bool:
    """A reset among `statements`, outside any `if`/`try`: `optimizer.zero_grad()`, or
    `for p in model.parameters(): p.grad = None`."""
    for statement in statements:
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            if _ResetFinder().scan(statement).found:
                return True
        elif isinstance(statement, (cst.For, cst.With)) and depth < 2:
            if _resets_unconditionally(_block_statements(statement), depth + 1):
                return True
    return False


def _function_resets(function: cst.FunctionDef) -> bool:
    return _ResetFinder().scan(function.body).found


def _zero_grad_receivers(function: cst.FunctionDef) -> Set[str]:
    return _ResetFinder().scan(function.body).zero_grad_receivers
