"""Graph nodes: which forward results a tensor is computed from, to tell whether two backwards share a graph.

`loss.backward()` frees the graph of `loss`: every node (forward result,
non-leaf tensor) it is computed from. A later backward needs that graph
again only if its own loss reaches one of those nodes. The nodes are the
statements of a region of code (a loop's iteration, one run of a function)
whose values carry a graph into the tensor, followed back through reaching
definitions:

- a statement that runs a forward again makes new nodes: `D(G(z))` twice is
  two graphs, `critic(state, action)` and `critic(state, actor(state))` too;
- a detach (`graph.cuts`: `.detach()`, `.data`, `.item()`), a value computed
  under `torch.no_grad()`, a new leaf (`torch.FloatTensor(batch)`, a
  factory) and the loop's own batch end the walk;
- a value from outside the region whose graph state is not NO (a parameter,
  an attribute set elsewhere) is *unknown*: a graph the code does not show
  may enter through it, and both backwards may reach it;
- a value the walk cannot follow (a container filled in place,
  `outs.append(h)`; a binding it cannot read) is *opaque*: it may hold any
  node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from torchlint.flow import Definition, scopes
from torchlint.names import ModuleNames, dotted_name, prefixes, slot_of, target_names
from torchlint.training import graph
from torchlint.walk import preorder

Node = Tuple[int, Tuple[int, ...]]  # a control-flow node, and the part of its value an unpacking target takes

# Methods that put their argument into the receiver: a container's, or a tensor's in-place operation (`x.add_(y)`).
_FILLING_METHODS = frozenset({"append", "extend", "insert", "update", "add", "setdefault", "appendleft", "put",
                              "push", "__setitem__"})


@dataclass(frozen=True)
class GraphNodes:
    """The graph nodes a tensor is computed from, and the names through which the code does not show them."""

    nodes: FrozenSet[Node]
    unknown: FrozenSet[str]  # values from outside the region whose graph the code does not show
    opaque: FrozenSet[str]  # values the walk cannot follow: a container filled in place, an unreadable binding

    def may_share(self, other: "GraphNodes") -> bool:
        """The two graphs may have a node in common: a shared statement, a graph from outside that both may
        reach, or a value either holds that the walk cannot follow (`outs` after `outs.append(h)` may hold
        the other's `h`)."""
        return bool(self.nodes & other.nodes) or bool(self.unknown and other.unknown) \
            or bool(self.opaque or other.opaque)

    @property
    def shown(self) -> bool:
        """Every node is one the code shows: nothing unknown or opaque."""
        return not self.unknown and not self.opaque


@dataclass(frozen=True)
class Region:
    """The code the walk follows definitions in, and what it knows of the rest."""

    reaching: Callable[[int, str], List[Definition]]  # the definitions of a name that reach a node
    before: Callable[[str, Optional[Definition]], str]  # the graph state of a value from outside the region
    names: ModuleNames
    is_module: Callable[[str], bool]  # the name holds a module or a function: it is called
    filled: FrozenSet[str]  # names the region fills in place (`filled_in_place`)
    grad_off: Callable[[int], bool]  # the node runs under `torch.no_grad()`
    handed: FrozenSet[str] = frozenset()  # objects the region hands values to (`handed_values`)
    own_loop: Optional[cst.CSTNode] = None  # the loop whose target is fresh data each iteration
    # A call runs a function of the project that reads what the region binds (`self.compute_g_loss()` reading
    # `self.fake`): its result may hold nodes the walk does not see.
    reads_region: Callable[[cst.Call], bool] = lambda call: False


def graph_nodes(expression: cst.BaseExpression, at: int, region: Region) -> GraphNodes:
    """The graph nodes of the region that `expression`, evaluated at control-flow node `at`, is computed from."""
    nodes: Set[Node] = set()
    unknown: Set[str] = set()
    opaque: Set[str] = set()
    states: Dict[Tuple[str, int], str] = {}
    names = region.names

    def visit_value(value: Optional[cst.BaseExpression], node: int) -> str:
        """Walks what `value` reads; its own graph state (a forward pass makes one)."""
        if value is None:
            opaque.add("?")
            return graph.UNKNOWN
        state = graph.graph_state(value, names, lambda other: visit_name(other, node))
        if state == graph.NO and _instance_called(value, names):
            state = graph.UNKNOWN  # `D(x)` with `D` a parameter: a module's forward, not a class building one
        if state != graph.NO:  # `torch.FloatTensor(batch)` is a new leaf whatever `batch` was
            for name in _graph_reads(value, names):
                visit_name(name, node)
            for call in _calls(value, names):
                if region.reads_region(call):
                    opaque.add(dotted_name(call.func) or "?")
        return state

    def visit_name(name: str, node: int) -> str:
        key = (name, node)
        if key in states:
            return states[key]
        if name in ("None", "True", "False", "self", "cls") or region.is_module(name) \
                or name.split(".")[0] in names.aliases:
            return graph.NO  # a module, a function, an imported library's name
        states[key] = graph.NO  # a cycle through a nested loop adds nothing new
        if any(prefix in region.filled for prefix in prefixes(name)):
            opaque.add(name)
        candidate, definitions = name, []
        for candidate in prefixes(name):  # `out.logits`: the binding of `out`
            definitions = region.reaching(node, candidate)
            if definitions:
                break
        if not definitions or (candidate != name and all(d.kind in ("start", "parameter") for d in definitions)):
            return _outside(name, None)  # `self.buffer`, bound outside the region: not what `self` is
        found = []
        for definition in definitions:
            if definition.kind in ("start", "parameter"):
                found.append(_outside(candidate, definition))
            elif definition.kind in ("del", "effect") or graph.cuts(definition, names) \
                    or (definition.kind == "target" and region.own_loop is not None
                        and definition.syntax is region.own_loop) or region.grad_off(definition.node):
                found.append(graph.NO)
            elif definition.kind in ("assign", "target", "augmented"):
                # `x, z = x.cuda(), torch.rand(n)`: each target takes its own part (one node each)
                part = slot_of(definition.value, definition.position) if definition.unpacked \
                    and definition.position and definition.kind == "assign" else None
                state = visit_value(part if part is not None else definition.value, definition.node)
                if definition.kind == "augmented":  # `x += y`: the value before it too
                    state = graph.combine((state, visit_name(candidate, definition.node)))
                if state != graph.NO:
                    nodes.add((definition.node, definition.position if part is not None else ()))
                found.append(state)
            else:
                opaque.add(candidate)
                found.append(graph.UNKNOWN)
        states[key] = graph.combine(found)
        return states[key]

    def _outside(name: str, definition: Optional[Definition]) -> str:
        if any(prefix in region.handed for prefix in prefixes(name)[1:]):
            opaque.add(name)  # `self.cache` after `self.store(out)`: the method may have put `out` there
        state = region.before(name, definition)
        if state != graph.NO:
            unknown.add(name)
        return state

    visit_value(expression, at)
    return GraphNodes(frozenset(nodes), frozenset(unknown), frozenset(opaque))


def filled_in_place(code: cst.CSTNode) -> FrozenSet[str]:
    """Names `code` changes in place with a value: `outs.append(x)`, `outs[i] = x`, `state.h = x`, `x.add_(y)`;
    reaching definitions do not see those, so what such a name holds is not followed."""
    found: Set[str] = set()
    for part in preorder(code):
        if isinstance(part, cst.Expr) and isinstance(part.value, cst.Call) \
                and isinstance(part.value.func, cst.Attribute) and part.value.args \
                and _fills(part.value.func.attr.value):
            receiver = dotted_name(part.value.func.value)
            if receiver is not None:
                found.add(receiver)
        targets = [t.target for t in part.targets] if isinstance(part, cst.Assign) else \
            [part.target] if isinstance(part, (cst.AugAssign, cst.AnnAssign)) else []
        for target in targets:
            while isinstance(target, cst.Subscript):
                target = target.value
                name = dotted_name(target)
                if name is not None:
                    found.add(name)
            owner = dotted_name(target.value) if isinstance(target, cst.Attribute) else None
            if owner is not None and owner not in ("self", "cls"):  # `self.h = x` is a binding of `self.h`
                found.add(owner)
    return frozenset(found)


def _calls(value: cst.BaseExpression, names: ModuleNames) -> List[cst.Call]:
    """The calls `value` makes outside a detach."""
    if graph.detaches(value, names):
        return []
    found = [value] if isinstance(value, cst.Call) else []
    for child in value.children:
        if isinstance(child, cst.BaseExpression):
            found += _calls(child, names)
        elif isinstance(child, (cst.Arg, cst.BaseElement)):
            found += _calls(child.value, names)
    return found


def handed_values(code: cst.CSTNode) -> FrozenSet[str]:
    """Objects `code` passes values to through a method call (`self.store(out)`, `memory.push(h)`): their
    attributes may hold those values afterwards."""
    found: Set[str] = set()
    for part in preorder(code):
        if isinstance(part, cst.Expr) and isinstance(part.value, cst.Call) \
                and isinstance(part.value.func, cst.Attribute) and part.value.args:
            receiver = dotted_name(part.value.func.value)
            if receiver is not None:
                found.add(receiver)
    return frozenset(found)


def outer_reads(function: cst.FunctionDef) -> FrozenSet[str]:
    """The names a function reads that it does not bind: the attributes of `self` (`self.fake`) and the
    module's names, not its parameters and locals (`z` of the function is not the loop's `z`)."""
    parameters = set(scopes.parameter_names(function.params))
    local = {name.split(".")[0] for name in bound_names(function.body) if "." not in name} | parameters
    local -= {"self", "cls"}
    return frozenset(name for name in scopes.free_names(function.body, lambdas=True)
                     if name.split(".")[0] not in local and name not in ("self", "cls"))


def bound_names(code: cst.CSTNode) -> FrozenSet[str]:
    """The dotted names `code` assigns (`fake`, `self.fake`), and those it fills in place."""
    found: Set[str] = set(filled_in_place(code))
    for part in preorder(code):
        targets = [t.target for t in part.targets] if isinstance(part, cst.Assign) else \
            [part.target] if isinstance(part, (cst.AugAssign, cst.AnnAssign)) else []
        for target in targets:
            found.update(name for name in target_names(target))
    return frozenset(found)



def _instance_called(value: cst.BaseExpression, names: ModuleNames) -> bool:
    """`value` calls a capitalised name that is neither a class of the file nor an imported one (`D(x)`, `G(z)`
    for networks passed in), outside a detach: `graph.graph_state` reads such a call as building an object."""
    if graph.detaches(value, names):
        return False
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
        callee = value.func.value
        if callee[:1].isupper() and callee not in names.classes and names.qualify(value.func) is None:
            return True
    return any(_instance_called(child, names) for child in value.children if isinstance(child, cst.BaseExpression)
               or isinstance(child, (cst.Arg, cst.Element, cst.BaseElement)))


def _fills(method: str) -> bool:
    return method in _FILLING_METHODS or (method.endswith("_") and method not in ("detach_", "zero_"))


def _graph_reads(value: cst.BaseExpression, names: ModuleNames) -> List[str]:
    """The names whose graphs flow into `value`: operands, arguments, the receiver of a method call
    (`dist` in `dist.log_prob(a)`), not a module or function called by name (`model` in `model(x)`), nor a
    name of an imported library (`torch.float32`), nor anything under a detach."""
    if graph.detaches(value, names):
        return []
    if isinstance(value, (cst.Name, cst.Attribute)):
        name = dotted_name(value)
        if name is None:
            return scopes.free_names(value)
        return [] if name in ("None", "True", "False") or names.qualify(value) is not None else [name]
    if isinstance(value, cst.Call):
        if graph.graph_state(value, names, lambda name: graph.UNKNOWN) == graph.NO \
                and not _instance_called(value, names):
            return []  # a new leaf whatever its inputs: `torch.FloatTensor(batch)`, `torch.zeros_like(x)`
        found = [name for arg in value.args if not (arg.keyword is not None and arg.keyword.value in graph.SETTINGS)
                 for name in _graph_reads(arg.value, names)]
        func = value.func
        if isinstance(func, cst.Attribute) and names.qualify(func) is None:
            found += _graph_reads(func.value, names)  # a method of a value; `self.net(x)` reads `self`, skipped
        elif not isinstance(func, (cst.Name, cst.Attribute)):
            found += _graph_reads(func, names)  # `make()(x)`
        return found
    if isinstance(value, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString,
                          cst.FormattedString, cst.Lambda, cst.Comparison)):
        return []
    if isinstance(value, cst.IfExp):
        return _graph_reads(value.body, names) + _graph_reads(value.orelse, names)
    if isinstance(value, cst.BooleanOperation):
        return _graph_reads(value.left, names) + _graph_reads(value.right, names)
    if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation, cst.Subscript, cst.Tuple, cst.List)):
        return [name for part in graph.value_parts(value) for name in _graph_reads(part, names)]
    return scopes.free_names(value)  # a comprehension, a dict, a starred value: every name it reads
