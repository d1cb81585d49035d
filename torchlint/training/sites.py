"""Where things happen in a training loop's body: backwards, steps, resets, calls, assignments.

Sites are collected from the loop's nodes in the function's control-flow
graph (`torchlint.flow`), so each knows its node and rank there (its
*point*), the branches it runs in (the `if` tests that dominate it in the
iteration) and the `with` contexts around it. `order` numbers sites in
source order; it is for sorting findings, never for deciding what runs
before what: `TrainingLoop.dominates`, `precedes` and `runs_whenever` answer
that from the graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Tuple

import libcst as cst

from torchlint.flow import ControlFlowGraph, Definition, Iteration, LoopRegion
from torchlint.flow import scopes
from torchlint.flow.cfg import DEF, STATEMENT, Node, block_of
from torchlint.names import ModuleNames, dotted_name, is_true, keyword, positional, short_callee, target_names
from torchlint.training import roles
from torchlint.walk import calls_in

if TYPE_CHECKING:
    from torchlint.training.calls import Functions, Via


@dataclass(frozen=True)
class Guard:
    """A branch a site runs in: `test` holds (or, `negated`, does not).

    `node` is the `if` statement (or `match` case); `after_continue` marks a
    guard the site is not inside syntactically: `if test: ... continue`
    puts the statements after it on the branch where `test` is false.
    """

    test: cst.BaseExpression
    negated: bool
    node: cst.CSTNode
    after_continue: bool = False
    assume: int = -1  # the assume node of the branch in the control-flow graph
    # A condition passed as an argument (`update_grad=(i + 1) % n == 0` to a function whose `if update_grad:`
    # holds the site, `training.calls`): `node` is the call, `at` its control-flow node, where `test` is read.
    at: int = -1

    @property
    def read_at(self) -> int:
        """The control-flow node where the test's names are read: the branch's, or the call's that passes it."""
        return self.assume if self.assume >= 0 else self.at


@dataclass(frozen=True)
class Site:
    """Where something happens in a loop body."""

    order: int  # source order, for sorting
    node: cst.CSTNode
    statement: cst.CSTNode  # the SimpleStatementLine (or compound statement) holding it
    guards: Tuple[Guard, ...]
    contexts: Tuple[cst.BaseExpression, ...]  # `with` items between loop and site
    depth: int  # nested loops between the training loop and the site
    point: Tuple[int, int] = (-1, 0)  # (control-flow node, rank within it)
    via: Optional["Via"] = None  # run by a function the loop calls: where the site really is (`training.calls`)

    @property
    def elsewhere(self) -> bool:
        """The site runs in another file of the project, inside the call of the loop it is recorded at."""
        return self.via is not None and self.via.elsewhere is not None

    @property
    def on_own_line(self) -> bool:
        """The statement is alone on an indented line, so it can be moved or deleted (not a call that runs the
        site in another file, under conditions of its own there)."""
        return isinstance(self.statement, cst.SimpleStatementLine) and len(self.statement.body) == 1 \
            and not self.elsewhere


@dataclass(frozen=True)
class BackwardSite(Site):
    """A backward (or `autograd.grad`) call and the tensor it starts from."""

    loss: Optional[cst.BaseExpression] = None
    kind: str = "tensor"  # see roles.classify_backward
    retain_graph: Optional[cst.Arg] = None
    create_graph: bool = False
    receiver: Optional[str] = None  # `accelerator` in `accelerator.backward(loss)`

    @property
    def loss_name(self) -> Optional[str]:
        return dotted_name(self.loss) if self.loss is not None else None

    @property
    def loss_taker(self) -> Optional[str]:
        """The object this backward hands a loss to backpropagate, as the loop writes it: `model` in
        `model.backward(loss)` (a DeepSpeed engine, apex's `FP16_Optimizer`). None for a tensor's own
        `loss.backward()`, and for a backward a called function runs (its names are that function's)."""
        node = self.node
        if self.via is not None or not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute) \
                or node.func.attr.value != "backward" or not node.args or node.args[0].keyword is not None:
            return None
        return dotted_name(node.func.value)


@dataclass(frozen=True)
class StepSite(Site):
    """`<receiver>.step(...)`, or `scaler.step(optimizer)` (receiver = `optimizer`)."""

    receiver: str = ""
    via_scaler: bool = False


@dataclass(frozen=True)
class ResetSite(Site):
    """A gradient reset: `zero_grad()`, `p.grad = None`, `p.grad.zero_()`, or a helper that does one.

    `target`: the receiver of `zero_grad()`; for a reset of each parameter's
    gradient, the model or optimizer whose parameters the enclosing loop
    walks (`for p in model.parameters()`), or "" when that cannot be read.
    """

    target: str = ""
    kind: str = "zero_grad"  # zero_grad | parameters | assigned (`p.grad = g`) | helper | helper-maybe
    action: Optional[cst.CSTNode] = None  # in a loop over parameters (the site's node): `p.grad = None`

    def quote(self, code) -> str:
        """How a message quotes the reset: its code, or for a loop over parameters its header and action, or for
        one a call of the loop runs in another file, that call (`agent.update(...)`)."""
        if self.elsewhere:
            return f"{code(self.via.call.func)}(...)"
        if self.action is None:
            return code(self.node)
        loop = self.node
        return f"for {code(loop.target)} in {code(loop.iter)}: ... {code(self.action)}"


@dataclass(frozen=True)
class ScaleSite(Site):
    """Gradients rescaled in place: `p.grad.div_(n)`, `p.grad /= n`, or a helper that does it."""


@dataclass(frozen=True)
class CallSite(Site):
    callee: Optional[str] = None


@dataclass(frozen=True)
class Assignment(Site):
    """`target <operator> value`; `operator` is `=` or an augmented one like `+=`."""

    target: str = ""
    operator: str = "="
    value: Optional[cst.BaseExpression] = None
    definition: Optional[Definition] = None

    @property
    def reads_target(self) -> bool:
        return self.definition is not None and self.definition.reads_itself


def guards_of(iteration: Iteration, node: Node) -> Tuple[Guard, ...]:
    """The `if` branches (and `match` cases) that `node` runs in within the iteration, outermost first."""
    inside = set(node.branches)
    found = []
    for assume_node in iteration.assumptions(node.index):
        assume = assume_node.assume
        if isinstance(assume.statement, cst.If):
            found.append(Guard(assume.test, not assume.holds, assume.statement,
                               (id(assume.statement), assume.holds) not in inside, assume_node.index))
        elif isinstance(assume.statement, (cst.MatchCase, cst.ExceptHandler, cst.ExceptStarHandler)):
            found.append(Guard(assume.test, False, assume.statement, False, assume_node.index))
    return tuple(found)


@dataclass
class Collected:
    backwards: List[BackwardSite]
    steps: List[StepSite]
    resets: List[ResetSite]
    scalings: List[ScaleSite]
    calls: List[CallSite]
    assignments: List[Assignment]


class SiteCollector:
    """Walks the nodes of one loop region in source order and records what happens there."""

    def __init__(self, names: ModuleNames, graph: ControlFlowGraph, region: LoopRegion, iteration: Iteration,
                 function: Optional[cst.FunctionDef], functions: Optional[Callable[[], "Functions"]] = None) -> None:
        self.names = names
        self.functions = functions
        self.graph = graph
        self.region = region
        self.iteration = iteration
        self.function = function
        head = graph.nodes[region.head]
        self.base_depth = len(head.loops)
        self.base_contexts = len(head.contexts)
        self.order = 0
        self.found = Collected([], [], [], [], [], [])
        self._guards: Dict[int, Tuple[Guard, ...]] = {}
        self._bases: Dict[int, dict] = {}
        self._helper_work: Dict[str, Tuple[bool, bool, bool]] = {}  # callee -> (resets, always, scales)

    def collect(self) -> Collected:
        for index in sorted(self.region.body):
            self._node(self.graph.nodes[index])
        return self.found

    def _next(self) -> int:
        self.order += 1
        return self.order

    def _common(self, node: Node, rank: int) -> dict:
        """The fields every site at `node` shares, and its point."""
        base = self._bases.get(node.index)
        if base is None:
            statement = node.line if node.line is not None else node.syntax
            base = self._bases[node.index] = dict(statement=statement, guards=self._guards_of(node),
                                                  contexts=node.contexts[self.base_contexts:],
                                                  depth=len(node.loops) - self.base_depth)
        return {**base, "point": (node.index, rank)}

    def _guards_of(self, node: Node) -> Tuple[Guard, ...]:
        guards = self._guards.get(node.index)
        if guards is None:
            guards = self._guards[node.index] = guards_of(self.iteration, node)
        return guards

    def _node(self, node: Node) -> None:
        if node.kind == DEF:
            return  # a nested function or class runs when called, not here
        rank = 0
        for expression in node.expressions:
            if node.kind == "bind":
                continue
            for call in calls_in(expression):
                rank += 1
                self._call(call, node, rank, expression)
        if node.kind != STATEMENT:
            return
        for definition in node.definitions:
            if definition.kind not in ("assign", "augmented") or definition.syntax is not node.syntax:
                continue
            rank += 1
            common = self._common(node, rank)
            target = _target_node(node.syntax, definition.name)
            if definition.name.endswith(".grad") and roles.is_none(definition.value):
                self._reset(node.syntax, node, rank, definition.name[:-len(".grad")])
            elif target is not None and roles.scales_grad_assignment(target, definition.operator, definition.value):
                self.found.scalings.append(ScaleSite(self._next(), node.syntax, **common))
            elif definition.name.endswith(".grad") and definition.kind == "assign" and definition.value is not None \
                    and not definition.reads_itself:
                self._assigned(node.syntax, node, definition.name[:-len(".grad")])
            self.found.assignments.append(
                Assignment(self._next(), node.syntax, target=definition.name, operator=definition.operator,
                           value=definition.value, definition=definition, **common))

    def _reset(self, syntax: cst.CSTNode, node: Node, rank: int, owner: str) -> None:
        """`p.grad = None` / `p.grad.zero_()`: a reset of the parameters the enclosing loop walks. The site is
        that loop as a whole (`for p in model.parameters(): ...`), where it starts to run; a reset of one
        tensor's gradient outside such a loop (`delta.grad.zero_()`) is a site of its own."""
        target, walk = self._parameters_of(owner, node)
        if walk is None:
            self.found.resets.append(ResetSite(self._next(), syntax, target=target, kind="parameters",
                                               **self._common(node, rank)))
            return
        start = self.graph.iterable_node(walk)
        around = {id(guard.node) for guard in self._guards_of(start)}  # the branches the whole loop runs in
        if any(id(guard.node) not in around and _reads_value_of(guard.test, f"{owner}.grad")
               for guard in self._guards_of(node)):
            return  # `if p.grad.sum() == 0: p.grad = None`: only the gradients the test picks, not the module's
        if any(reset.node is walk for reset in self.found.resets):
            return  # `p.grad.detach_(); p.grad.zero_()`: one reset
        self.found.resets.append(ResetSite(self._next(), walk, target=target, kind="parameters", action=syntax,
                                           **self._common(start, 0)))

    def _assigned(self, syntax: cst.CSTNode, node: Node, owner: str) -> None:
        """`p.grad = g` (a value that does not read `p.grad`) in a loop over parameters (`for g, p in zip(grads,
        model.parameters()):`): what backward accumulated there is thrown away, each gradient replaced. A reset
        of its kind, "assigned": it clears what earlier iterations left (missing-zero-grad), but the gradients the
        step then applies are the new ones, set on purpose between backward and step. One tensor's gradient
        set outside such a loop is none."""
        target, walk = self._parameters_of(owner, node)
        if walk is None or any(reset.node is walk for reset in self.found.resets):
            return
        self.found.resets.append(ResetSite(self._next(), walk, target=target, kind="assigned", action=syntax,
                                           **self._common(self.graph.iterable_node(walk), 0)))

    def _parameters_of(self, name: str, node: Node) -> Tuple[str, Optional[cst.For]]:
        """(`model`, the loop) for `p` in `for p in model.parameters():`; (`opt`, the outer loop) for
        `for g in opt.param_groups: for p in g["params"]:`; ("", None) when no loop walks `p`."""
        for loop in reversed(node.loops[self.base_depth:]):
            if not isinstance(loop, cst.For) or name not in target_names(loop.target):
                continue
            iterable = _walked_by(loop.target, loop.iter, name, self.names)
            if iterable is None:
                return "", loop
            if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) \
                    and iterable.func.attr.value in ("parameters", "named_parameters", "values"):
                return dotted_name(iterable.func.value) or "", loop
            if isinstance(iterable, cst.Attribute) and iterable.attr.value == "param_groups":
                return dotted_name(iterable.value) or "", loop
            if isinstance(iterable, cst.Subscript):
                group = dotted_name(iterable.value)
                owner, outer = self._parameters_of(group, node) if group else ("", None)
                return owner, outer or loop
            # `for p in params:` with `params = list(model.parameters())`: a module the list was made from (the
            # loop resets each of them; one names the reset).
            owners = roles.parameter_owners(iterable, self.names, follow=2)
            return (min(owners) if owners else ""), loop
        return "", None

    def _call(self, call: cst.Call, node: Node, rank: int, expression: cst.CSTNode) -> None:
        common = self._common(node, rank)
        syntax = call
        backward = roles.classify_backward(call, self.names)
        if backward is not None:
            kind, loss, receiver = backward
            if loss is not None and _reads_bound(loss, scopes.bound_around(expression, call)):
                # `[l.backward() for l in losses]`: each element's backward, on the comprehension's own
                # `l`, not on the function's name of that spelling; which tensor that is, unknown here.
                backward = (kind, None, receiver)
            self._add_backward(call, backward, common)
            return
        func = call.func
        callee = dotted_name(func)
        self.found.calls.append(CallSite(self._next(), syntax, callee=callee, **common))
        ran = False  # the call runs what a function of the project does, recorded here
        if self.functions is not None and not (isinstance(func, cst.Attribute) and func.attr.value == "step") \
                and (short_callee(func) in self.names.functions or (  # or a framework's method the class inherits
                    isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
                    and self.functions().callee(call, self.function) is not None)):
            self._inline(call, common)
        elif self.functions is not None and self.names.project is not None:
            remote = self.functions().remote(call, self.function)
            if remote is not None:
                ran = self._inline(call, common, remote=True)
                self._remote_grad_work(call, remote, common)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = dotted_name(func.value)
            if method == "step" and receiver is not None and not ran:  # `trainer.step(loss)`: what it runs counts
                self._add_step(call, receiver, common)
                return
            if method == "zero_grad":
                self.found.resets.append(ResetSite(self._next(), syntax, target=receiver or "", **common))
                return
            if roles.wipes_grad(call):
                self._reset(call, node, rank, roles.grad_owner(func.value) or "")
                return
        if roles.scales_grad_call(call, self.names):
            self.found.scalings.append(ScaleSite(self._next(), syntax, **common))
            return
        resets, always, scales = self._helper(callee)
        if resets:
            self.found.resets.append(ResetSite(self._next(), syntax, target=callee or "",
                                               kind="helper" if always else "helper-maybe", **common))
        if scales:
            self.found.scalings.append(ScaleSite(self._next(), syntax, **common))

    def _inline(self, call: cst.Call, common: dict, remote: bool = False) -> bool:
        """The backwards and steps a function of this file (or of another file of the project) runs when the loop
        calls it, at the call. A site in another file is recorded at the loop's call (the statement a person
        edits is there), with the loss the call passes for it; a site under a parameter the call passes a
        condition for (`update_grad=(i + 1) % n == 0`) runs under that condition too. `remote`: the call runs a
        function of another file or a method of an object (`Functions.remote`), whose resets are sites too.
        Whether any was found."""
        found = False
        for inner, via in self.functions().inlined(call, self.function):
            func = inner.call.func
            resets = isinstance(func, cst.Attribute) and func.attr.value == "zero_grad"
            if resets and not remote and via.direct:
                continue  # a reset in the body of a helper of this file that the loop calls: `_helper`'s
            found = True
            names = via.names(self.names)
            here = {**common, "via": via}
            node = call if via.elsewhere is not None else inner.call
            if via.elsewhere is None:
                here["statement"] = inner.statement
            if via.condition is not None:
                test, holds = via.condition
                here["guards"] = common["guards"] + (Guard(test, not holds, call, at=common["point"][0]),)
            own = dotted_name(func.value) if isinstance(func, cst.Attribute) else None
            if resets:
                # `self.optimizer.zero_grad()` in the object's method: the loop's `trainer.optimizer`'s reset; in a
                # function the loop's helper calls in turn (`self.optimizer_backward(self.cri_optimizer, obj)`,
                # whose body runs `optimizer.zero_grad()`), the reset of what the helper passes it
                self.found.resets.append(ResetSite(self._next(), node, target=via.rename(own) or "", **here))
                continue
            backward = roles.classify_backward(inner.call, names)
            if backward is not None:
                if via.elsewhere is not None:
                    backward = (backward[0], via.passed(backward[1]), backward[2])
                self._add_backward(inner.call, backward, here, via.rename, node)
                continue
            receiver = via.rename(own)
            if receiver is not None:
                # A scaler as the function's file says (`self._scaler = GradScaler()` there), or as named here.
                scaler = None if via.elsewhere is None else (
                    roles.is_scaler(own, names) or roles.is_scaler(receiver, self.names))
                self._add_step(inner.call, receiver, here, via.rename, scaler, node)
        return found

    def _remote_grad_work(self, call: cst.Call, remote, common: dict) -> None:
        """The resets and rescalings of the gradients that a function of another file of the project (or a
        method of an object) that the loop calls may run: in its body or in the functions of its file it calls.
        Its `zero_grad()` calls that run on every call (or under what the call passes) are sites of their own
        (`_inline`); any other reset makes the call a reset that may happen."""
        inlined = any(reset.via is not None and reset.via.call is call for reset in self.found.resets)
        module = remote.module
        names = module.names if module is not None else self.names
        functions = module.functions if module is not None else self.functions()
        bodies = [remote.function] + [callee for part in calls_in(remote.function.body)
                                      for callee in [functions.callee(part, remote.function)] if callee is not None]
        work = [roles.GradWork(body.body, names) for body in bodies]
        callee = dotted_name(call.func) or ""
        if any(done.resets for done in work) and not inlined:
            always = roles.resets_unconditionally(block_of(remote.function), names)
            self.found.resets.append(ResetSite(self._next(), call, target=callee,
                                               kind="helper" if always else "helper-maybe", **common))
        if any(done.scales for done in work):
            self.found.scalings.append(ScaleSite(self._next(), call, **common))

    def _add_backward(self, call: cst.Call, backward: tuple, fields: dict,
                      rename: Callable[[Optional[str]], Optional[str]] = lambda name: name,
                      node: Optional[cst.Call] = None) -> None:
        """A backward site from `roles.classify_backward`'s answer; `rename` maps a called function's names
        to the loop's; `node`: where the site is recorded, when not at `call` (a call of the loop that runs it
        in another file)."""
        kind, loss, receiver = backward
        self.found.backwards.append(BackwardSite(
            self._next(), node or call, loss=loss, kind=kind, retain_graph=roles.retain_graph_arg(call, kind),
            create_graph=is_true(keyword(call, "create_graph")), receiver=rename(receiver), **fields))

    def _add_step(self, call: cst.Call, receiver: str, fields: dict,
                  rename: Optional[Callable[[Optional[str]], Optional[str]]] = None,
                  scaler: Optional[bool] = None, node: Optional[cst.Call] = None) -> None:
        """`receiver.step(...)`; `scaler.step(optimizer)` is the optimizer's step. Through `rename`, an optimizer
        that is a parameter the call did not pass gives no site. `scaler`: whether the receiver is a scaler, as
        the file of the call says (by default, this file); `node`: as for `_add_backward`."""
        scaled = positional(call, 0)
        if scaler is None:
            scaler = roles.is_scaler(receiver, self.names)
        if scaled is not None and scaler:
            optimizer = dotted_name(scaled)
            if rename is not None:
                optimizer = rename(optimizer)
                if not optimizer:
                    return
            self.found.steps.append(StepSite(self._next(), node or call, receiver=optimizer or "", via_scaler=True,
                                             **fields))
        else:
            self.found.steps.append(StepSite(self._next(), node or call, receiver=receiver, **fields))

    def _helper(self, callee: Optional[str]) -> Tuple[bool, bool, bool]:
        """What the functions of this file that `callee` may run do to gradients: (they reset, one always
        resets, they rescale). A reset in a function of this file that one of them calls in turn may run too
        (`self.optimizer_backward(optimizer, loss)` resetting `optimizer` under a condition of its own); one it
        runs on every call is a site of its own (`_inline`)."""
        known = self._helper_work.get(callee or "")
        if known is None:
            functions = roles.helpers(callee, self.names, self.function)
            work = [roles.GradWork(function.body, self.names) for function in functions]
            deeper = [roles.GradWork(inner.body, self.names) for inner in self._called_by(functions)]
            known = self._helper_work[callee or ""] = (
                any(done.resets for done in work + deeper),
                any(roles.resets_unconditionally(block_of(function), self.names) for function in functions),
                any(done.scales for done in work))
        return known

    def _called_by(self, functions: List[cst.FunctionDef]) -> List[cst.FunctionDef]:
        """The functions of this file that `functions` call, themselves and the loop's function excluded."""
        if self.functions is None:
            return []
        index = self.functions()
        found: Dict[int, cst.FunctionDef] = {}
        for function in functions:
            for call in calls_in(function.body):
                inner = index.callee(call, function)
                if inner is not None and inner is not function and inner is not self.function \
                        and all(inner is not outer for outer in functions):
                    found[id(inner)] = inner
        return list(found.values())


def _reads_bound(expression: cst.BaseExpression, bound) -> bool:
    """`expression` reads one of the names a comprehension or lambda around it binds."""
    return bool(bound) and any(name.split(".", 1)[0] in bound for name in scopes.free_names(expression))


def _reads_value_of(node: cst.CSTNode, gradient: str) -> bool:
    """`node` reads the values of the tensor `gradient` (`p.grad`): a reset of a parameter's gradient under a test
    that does (`if p.grad is not None and p.grad.sum() == 0:`) clears only the gradients the test picks (those that
    hold nothing, say), which is no reset of the module's gradients. Comparing it with None (`p.grad is not None`)
    reads no value: that reset clears them all."""
    if isinstance(node, cst.Comparison) and dotted_name(node.left) == gradient and all(
            isinstance(target.operator, (cst.Is, cst.IsNot)) and roles.is_none(target.comparator)
            for target in node.comparisons):
        return False
    if isinstance(node, (cst.Attribute, cst.Name)) and dotted_name(node) == gradient:
        return True
    return any(_reads_value_of(child, gradient) for child in node.children)


def _walked_by(target: cst.BaseExpression, iterable: cst.BaseExpression, name: str,
               names) -> Optional[cst.BaseExpression]:
    """What the loop variable `name` walks: `b` for `p_b` in `for p_a, p_b in zip(a, b):`, `x` for `p` in
    `for i, p in enumerate(x):`, the iterable itself for `for p in x:`; None for an element of a zip or an
    enumerate that cannot be matched to one of its arguments."""
    for _ in range(4):
        if not isinstance(iterable, cst.Call) or names.qualify(iterable.func) is not None:
            return iterable
        callee = dotted_name(iterable.func)
        if callee not in ("zip", "enumerate") or (callee in names.functions or callee in names.bindings):
            return iterable
        if not isinstance(target, (cst.Tuple, cst.List)) or name not in target_names(target):
            return None  # `for pair in zip(a, b):`: a pair, read elsewhere
        slots = [element.value for element in target.elements]
        arguments = [arg.value for arg in iterable.args]
        if any(arg.keyword is not None or arg.star for arg in iterable.args):
            return None
        if callee == "enumerate":
            if len(slots) != 2 or len(arguments) != 1:
                return None
            slots, arguments = slots[1:], arguments
        elif len(slots) != len(arguments):
            return None
        holding = [(slot, argument) for slot, argument in zip(slots, arguments) if name in target_names(slot)]
        if len(holding) != 1:
            return None
        target, iterable = holding[0]
    return None



def _target_node(small: cst.CSTNode, name: str) -> Optional[cst.BaseExpression]:
    """The target expression that binds `name` in an assignment statement."""
    targets: List[cst.BaseExpression] = []
    if isinstance(small, cst.Assign):
        targets = [target.target for target in small.targets]
    elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
        targets = [small.target]
    for target in targets:
        if dotted_name(target) == name:
            return target
    return None
