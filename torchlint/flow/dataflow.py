"""Facts computed on a control-flow graph: reaching definitions, dominance, paths.

`FunctionFlow` answers for a whole function: which definitions of a name may
reach a node. `Iteration` answers for one loop, seen as one pass through its
body from the loop head to the back edge (or a `break`/`return`):

- every name gets a *start* definition at the head, standing for the value
  it has when the iteration begins (from before the loop, or from the
  previous iteration). Where a start definition reaches a use, the value
  may come from outside this iteration; where it does not, the name was
  assigned on every path before the use;
- a name is *carried* into the next iteration at a use when its start
  definition reaches the use and some definition in the body reaches the
  back edge: the loop's own target is bound at the top of every iteration,
  so it is never carried;
- dominance and post-dominance within the iteration: `a` runs in every
  iteration in which `b` runs exactly when `a` dominates or post-dominates
  `b`; the branches a node runs in are the assume nodes that dominate it;
- an exceptional exit (`raise`, `sys.exit()`: the graph's `raising` nodes)
  leaves the iteration without completing it: it is not one of the ways an
  iteration ends, so `if not ok: raise` does not keep the statements after
  it from post-dominating those before, and the branch that does not raise
  is not a condition on what runs in a completed iteration;
- paths: whether one point reaches another, around the back edge if need
  be, without passing nodes the caller names (a re-definition, a detach).

A *point* is `(node index, rank)`: the rank orders things within one node
(the calls of one statement, in evaluation order).
"""

from __future__ import annotations

from collections import deque
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

import libcst as cst

from torchlint.flow.cfg import ASSUME, BIND, HANDLER, ControlFlowGraph, Definition, LoopRegion, Node
from torchlint.flow.scopes import reads

Point = Tuple[int, int]


def _kill_masks(definitions: Sequence[Definition]) -> Dict[str, int]:
    """name -> bits of every definition of that name or of an attribute under it (`h` kills `h.x`)."""
    masks: Dict[str, int] = {}
    for definition in definitions:
        bit = 1 << definition.index
        masks[definition.name] = masks.get(definition.name, 0) | bit
    for name, bits in list(masks.items()):
        parts = name.split(".")
        for end in range(1, len(parts)):
            owner = ".".join(parts[:end])
            if owner in masks:
                masks[owner] |= bits
    return masks


def _solve(nodes: Sequence[Node], order: Sequence[int], start: Dict[int, int], gen: Dict[int, int],
           kill: Dict[int, int], allowed_edge) -> Dict[int, int]:
    """Reaching definitions as bit sets: IN of each node in `order` (a forward may-analysis)."""
    incoming: Dict[int, int] = {index: 0 for index in order}
    outgoing: Dict[int, int] = {}
    members = set(order)
    pending = deque(order)
    queued = set(order)
    while pending:
        index = pending.popleft()
        queued.discard(index)
        value = start.get(index, 0)
        for pred in nodes[index].pred:
            if pred in members and allowed_edge(pred, index):
                value |= outgoing.get(pred, 0)
        incoming[index] = value
        out = gen.get(index, 0) | (value & ~kill.get(index, 0))
        if outgoing.get(index) != out:
            outgoing[index] = out
            for succ in nodes[index].succ:
                if succ in members and succ not in queued and allowed_edge(index, succ):
                    pending.append(succ)
                    queued.add(succ)
    return incoming


def _transfer(definitions: Sequence[Definition], masks: Dict[str, int]) -> Tuple[int, int]:
    """(gen, kill) of one node's definitions, taken in order."""
    gen = kill = 0
    for definition in definitions:
        mask = masks[definition.name]
        gen = (gen & ~mask) | (1 << definition.index)
        kill |= mask
    return gen, kill & ~gen


def _bits(value: int) -> Iterable[int]:
    while value:
        low = value & -value
        yield low.bit_length() - 1
        value ^= low


class FunctionFlow:
    """Reaching definitions over a whole function body."""

    def __init__(self, graph: ControlFlowGraph) -> None:
        self.graph = graph
        self.masks = _kill_masks(graph.definitions)
        self._gen: Dict[int, int] = {}
        self._kill: Dict[int, int] = {}
        for node in graph.nodes:
            if node.definitions:
                self._gen[node.index], self._kill[node.index] = _transfer(node.definitions, self.masks)
        self._incoming: Optional[Dict[int, int]] = None
        self._iterations: Dict[int, Iteration] = {}

    def reaching(self, node: int, name: str) -> List[Definition]:
        """Definitions of `name` (or of an attribute of it) that may reach the start of `node`."""
        if self._incoming is None:
            order = _reverse_postorder(self.graph.nodes, self.graph.entry, lambda a, b: True)
            self._incoming = _solve(self.graph.nodes, order, {}, self._gen, self._kill, lambda a, b: True)
        bits = self._incoming.get(node, 0) & self.masks.get(name, 0)
        return [self.graph.definitions[index] for index in _bits(bits) if self.graph.definitions[index].name == name]

    def pruned(self, blocked: FrozenSet[int]) -> "PrunedFlow":
        """The function when the branches headed by the assume nodes `blocked` are never taken (`if labels is
        None:` for a call that passes labels): what reaches each node on the other paths."""
        return PrunedFlow(self, blocked)

    def replaces(self, name: str) -> bool:
        """Every call that returns replaces `name`: on each path from the entry to a `return` or the end,
        an assignment gives it a value not computed from the one it had on entry (`self.model =
        build()`, then `self.model = wrap(self.model)` still counts; `self.model = self.model.to(d)` alone
        does not). A `raise` is not a way through."""
        graph = self.graph
        stops = {definition.node for definition in graph.definitions
                 if definition.name == name and definition.kind == "assign" and not definition.reads_itself}
        seen: Set[int] = set()
        stack = [graph.entry]
        while stack:
            node = stack.pop()
            if node in seen or node in stops or node in graph.raising:
                continue
            if node == graph.exit:
                return False
            seen.add(node)
            stack.extend(graph.nodes[node].succ)
        return True

    def leaving(self, node: int, name: str) -> List[Definition]:
        """Definitions of `name` that may hold right after `node`."""
        own = [definition for definition in self.graph.nodes[node].definitions if definition.name == name]
        return own[-1:] if own else self.reaching(node, name)

    def entering(self, region: LoopRegion, name: str) -> List[Definition]:
        """Definitions of `name` made before the loop that reach its head; not the body's own, which
        come back to it through an outer loop."""
        found: Dict[int, Definition] = {}
        for pred in region.entry:
            for definition in self.leaving(pred, name):
                if definition.node not in region.body:
                    found[definition.index] = definition
        return [found[index] for index in sorted(found)]

    def first_entering(self, region: LoopRegion, name: str) -> Tuple[List[Definition], bool]:
        """The definitions of `name` that may hold when the loop starts for the first time in a call, and
        whether some path reaches it from the function's entry with `name` assigned nowhere on the way.
        The first start is reached without taking a loop's back edge: `step += 1` at the end of an epoch
        loop around this one reaches later starts, not the first."""
        latches = {(latch, other.head) for other in self.graph.loops.values() for latch in other.latches}

        def allowed(source: int, target: int) -> bool:
            return (source, target) not in latches

        unset = 1 << len(self.graph.definitions)  # a marker: no definition of `name` since the entry
        owners = {".".join(name.split(".")[:end]) for end in range(1, name.count(".") + 2)}
        kill = dict(self._kill)
        for node in self.graph.nodes:
            if node.index != self.graph.entry and any(d.name in owners for d in node.definitions):
                kill[node.index] = kill.get(node.index, 0) | unset
        order = _reverse_postorder(self.graph.nodes, self.graph.entry, allowed)
        incoming = _solve(self.graph.nodes, order, {self.graph.entry: unset}, self._gen, kill, allowed)
        bits = incoming.get(region.head, 0)
        found = [self.graph.definitions[index] for index in _bits(bits & self.masks.get(name, 0))
                 if self.graph.definitions[index].name == name]
        return found, bool(bits & unset)

    def first_reached_avoiding(self, region: LoopRegion, avoiding: FrozenSet[int]) -> bool:
        """Some path from the function's entry reaches the loop's first start without passing `avoiding`."""
        latches = {(latch, other.head) for other in self.graph.loops.values() for latch in other.latches}
        seen: Set[int] = set()
        stack = [self.graph.entry]
        while stack:
            node = stack.pop()
            if node in seen or node in avoiding:
                continue
            if node == region.head:
                return True
            seen.add(node)
            stack.extend(succ for succ in self.graph.nodes[node].succ if (node, succ) not in latches)
        return False

    def returning(self, region: LoopRegion, name: str) -> List[Definition]:
        """Definitions of `name` made in the loop's body that reach its head again from outside it: through
        an outer loop, into the loop's next run (`entering` leaves them out)."""
        found: Dict[int, Definition] = {}
        for pred in region.entry:
            for definition in self.leaving(pred, name):
                if definition.node in region.body:
                    found[definition.index] = definition
        return [found[index] for index in sorted(found)]

    def read_after(self, region: LoopRegion, name: str) -> bool:
        """A value the loop's body gives `name` is read outside the body: after the loop, or around it."""
        for node in self.graph.nodes:
            if node.index in region.body or not any(reads(part, name) for part in _read_parts(node)):
                continue
            if any(definition.node in region.body for definition in self.reaching(node.index, name)):
                return True
        return False

    def iteration(self, region: LoopRegion) -> "Iteration":
        iteration = self._iterations.get(region.head)
        if iteration is None:
            iteration = self._iterations[region.head] = Iteration(self, region)
        return iteration


class PrunedFlow:
    """Reaching definitions over the paths of a function that avoid some assume nodes (`FunctionFlow.pruned`);
    a node those paths do not reach (a `return` in a branch not taken) reaches nothing."""

    def __init__(self, flow: FunctionFlow, blocked: FrozenSet[int]) -> None:
        self.flow = flow
        graph = flow.graph

        def allowed(source: int, target: int) -> bool:
            return target not in blocked

        order = _reverse_postorder(graph.nodes, graph.entry, allowed)
        self.reachable: FrozenSet[int] = frozenset(order)
        self._incoming = _solve(graph.nodes, order, {}, flow._gen, flow._kill, allowed)

    def reaching(self, node: int, name: str) -> List[Definition]:
        bits = self._incoming.get(node, 0) & self.flow.masks.get(name, 0)
        definitions = self.flow.graph.definitions
        return [definitions[index] for index in _bits(bits) if definitions[index].name == name]


class Iteration:
    """One pass through a loop body, from its head to the back edge or out of the loop."""

    def __init__(self, flow: FunctionFlow, region: LoopRegion) -> None:
        # the flow's masks, not the flow: it holds its iterations, and a cycle between them would leave the graph
        # (and the syntax tree it points into) for the cyclic collector to find, where counting references frees it
        self._flow_masks = flow.masks
        self.graph = flow.graph
        self.region = region
        self.head = region.head
        self.members = region.body | {region.head}
        self._latches = frozenset(region.latches)
        nodes = self.graph.nodes
        self.order = [index for index in _reverse_postorder(nodes, self.head, self._edge) if index in self.members]
        self._idom = _dominators(self.order, lambda index: [p for p in nodes[index].pred
                                                            if p in self.members and self._edge(p, index)])
        raising = self.graph.raising
        self._exits = {index for index in self.order if index not in raising and (
                       index in self._latches or any(s not in self.members for s in nodes[index].succ)
                       or not nodes[index].succ)}
        reverse = _reverse_postorder_from(self._exits, lambda index: [p for p in nodes[index].pred
                                                                       if p in self.members and self._edge(p, index)])
        self._ipdom = _dominators(reverse, lambda index: [s for s in nodes[index].succ
                                                          if s in self.members and self._edge(index, s)],
                                  roots=self._exits)
        self._completes = frozenset(reverse)  # the nodes from which the iteration can end other than by raising
        self._start_index: Dict[str, int] = {}
        self._starts: List[Definition] = []
        self._incoming: Optional[Dict[int, int]] = None

    def _edge(self, source: int, target: int) -> bool:
        return target != self.head and source in self.members and target in self.members

    # --- reaching definitions ----------------------------------------------------------

    def _solve(self) -> Dict[int, int]:
        if self._incoming is None:
            base = len(self.graph.definitions)
            names = sorted(self._flow_masks)
            self._starts = [Definition(base + position, name, self.head, "start") for position, name in
                            enumerate(names)]
            self._start_index = {definition.name: definition.index for definition in self._starts}
            start_bits = sum(1 << definition.index for definition in self._starts)
            masks = dict(self._flow_masks)
            for definition in self._starts:  # a start definition is killed like any definition of its name
                parts = definition.name.split(".")
                for end in range(1, len(parts) + 1):
                    owner = ".".join(parts[:end])
                    if owner in masks:
                        masks[owner] |= 1 << definition.index
            self._masks = masks
            gen: Dict[int, int] = {}
            kill: Dict[int, int] = {}
            for index in self.order:
                node = self.graph.nodes[index]
                if node.definitions:
                    gen[index], kill[index] = _transfer(node.definitions, masks)
            self._incoming = _solve(self.graph.nodes, self.order, {self.head: start_bits}, gen, kill, self._edge)
            self._gen, self._kill = gen, kill
        return self._incoming

    def _definition(self, index: int) -> Definition:
        base = len(self.graph.definitions)
        return self.graph.definitions[index] if index < base else self._starts[index - base]

    def reaching(self, node: int, name: str) -> List[Definition]:
        """Definitions of `name` that may reach the start of `node` in this iteration; a `start`
        definition stands for the value the name had when the iteration began."""
        incoming = self._solve()
        mask = self._masks.get(name)
        if mask is None:  # never assigned in the function: always the value from outside
            return [Definition(-1, name, self.head, "start")]
        found = (self._definition(index) for index in _bits(incoming.get(node, 0) & mask))
        return [definition for definition in found if definition.name == name]

    def fresh_at(self, node: int, name: str) -> bool:
        """`name` was given a value on every path from the top of the iteration to `node`."""
        return not any(definition.kind == "start" for definition in self.reaching(node, name))

    def carried_out(self, name: str) -> List[Definition]:
        """Definitions of `name` in the body that reach the back edge: the values the next iteration starts with."""
        incoming = self._solve()
        found: Dict[int, Definition] = {}
        for latch in self.region.latches:
            if latch not in incoming:
                continue
            out = self._gen.get(latch, 0) | (incoming[latch] & ~self._kill.get(latch, 0))
            for index in _bits(out & self._masks.get(name, 0)):
                definition = self._definition(index)
                if definition.name == name and definition.kind != "start":
                    found[definition.index] = definition
        return [found[index] for index in sorted(found)]

    def carried(self, node: int, name: str) -> bool:
        """The value of `name` read at `node` may be the one the previous iteration left."""
        return not self.fresh_at(node, name) and bool(self.carried_out(name))

    # --- dominance ----------------------------------------------------------------------

    def dominates(self, a: Point, b: Point) -> bool:
        """Every pass from the head to `b` goes through `a` first."""
        if a[0] == b[0]:
            return a[1] <= b[1]
        return _chain_contains(self._idom, b[0], a[0])

    def postdominates(self, a: Point, b: Point) -> bool:
        """Every pass through `b` goes on through `a` before the iteration ends."""
        if a[0] == b[0]:
            return a[1] >= b[1]
        return _chain_contains(self._ipdom, b[0], a[0])

    def runs_whenever(self, a: Point, b: Point) -> bool:
        """`a` runs in every iteration in which `b` runs."""
        if b[0] not in self._idom:
            return True  # `b` never runs
        return self.dominates(a, b) or self.postdominates(a, b)

    def every_pass_runs(self, nodes: FrozenSet[int]) -> bool:
        """Every pass through the iteration that ends other than by raising runs one of `nodes` (`if a: f(x)
        else: f(y)`). The head's way out of the loop, taken when no pass begins, is no pass."""
        if self.head in nodes:
            return True
        reached = self._forward(self.head, nodes, around=False)
        return not any(index in reached and index not in nodes for index in self._exits if index != self.head)

    def completes(self, node: int) -> bool:
        """Some path from `node` ends the iteration other than by raising (the back edge, `continue`,
        `break`, `return`, leaving the loop)."""
        return node in self._completes

    def assumptions(self, node: int) -> List[Node]:
        """The assume nodes (and `except` handlers) on every path from the head to `node`, outermost
        first; not one whose other branch raises (`if not ok: raise`): that says only that the
        iteration completes."""
        found = []
        current = self._idom.get(node)
        while current is not None and current != node:
            candidate = self.graph.nodes[current]
            if candidate.kind in (ASSUME, HANDLER) and candidate.index != node \
                    and not self._only_way_on(candidate):
                found.append(candidate)
            parent = self._idom.get(current)
            if parent == current:
                break
            current = parent
        found.reverse()
        own = self.graph.nodes[node]
        return found + ([own] if own.kind in (ASSUME, HANDLER) and not self._only_way_on(own) else [])

    def _only_way_on(self, assume: Node) -> bool:
        """The other branch of the `if` whose branch this assume heads can only raise."""
        if not isinstance(assume.assume.statement, cst.If):
            return False
        nodes = self.graph.nodes
        siblings = [s for test in assume.pred if test in self.members for s in nodes[test].succ
                    if s != assume.index and s in self.members]
        return bool(siblings) and not any(self.completes(s) for s in siblings)

    # --- paths ----------------------------------------------------------------------------

    def precedes(self, a: Point, b: Point) -> bool:
        """`a` may run before `b` in the same iteration."""
        if a[0] == b[0]:
            return a[1] < b[1]
        return b[0] in self._forward(a[0], frozenset(), around=False)

    def reaches(self, a: Point, b: Point, avoiding: FrozenSet[int] = frozenset(), around: bool = True) -> bool:
        """A path from `a` to `b` that passes no node in `avoiding` between them; with `around`, it may
        return to the head (into a later iteration). `b`'s own node counts as reached even if avoided."""
        if a[0] == b[0] and a[1] < b[1]:
            return True
        return b[0] in self._forward(a[0], avoiding, around)

    def read_later(self, point: Point, name: str) -> bool:
        """The value `name` has at `point` is read again later in the same iteration (before any
        redefinition): `print(loss.item())` after `loss.backward()`."""
        values = {definition.index for definition in self.reaching(point[0], name)}
        # and what the node itself binds to it (a loop's target at its bind node)
        values.update(d.index for d in self.graph.nodes[point[0]].definitions if d.name == name)
        for index in self._forward(point[0], frozenset(), around=False):
            node = self.graph.nodes[index]
            if not any(reads(part, name) for part in _read_parts(node)):
                continue
            if values & {definition.index for definition in self.reaching(index, name)}:
                return True
        return False

    def _forward(self, start: int, avoiding: FrozenSet[int], around: bool) -> Set[int]:
        nodes = self.graph.nodes
        seen: Set[int] = set()
        pending = [succ for succ in nodes[start].succ if succ in self.members and (around or succ != self.head)]
        while pending:
            index = pending.pop()
            if index in seen:
                continue
            seen.add(index)
            if index in avoiding:
                continue
            for succ in nodes[index].succ:
                if succ in self.members and (around or succ != self.head) and succ not in seen:
                    pending.append(succ)
        return seen


def _read_parts(node: Node) -> Iterable[cst.CSTNode]:
    """What a node reads: an assignment's value (and an augmented target), not the names it binds (nor a loop's
    target, bound at its bind node)."""
    if node.kind == BIND:
        return
    for expression in node.expressions:
        if isinstance(expression, (cst.Assign, cst.AnnAssign)):
            if expression.value is not None:
                yield expression.value
        elif isinstance(expression, cst.AugAssign):
            yield expression.target
            yield expression.value
        else:
            yield expression


def _reverse_postorder(nodes: Sequence[Node], root: int, allowed) -> List[int]:
    return _reverse_postorder_from([root], lambda index: [s for s in nodes[index].succ if allowed(index, s)])


def _reverse_postorder_from(roots: Iterable[int], successors) -> List[int]:
    seen: Set[int] = set()
    order: List[int] = []
    for root in roots:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(successors(root)))]
        while stack:
            index, remaining = stack[-1]
            advanced = False
            for succ in remaining:
                if succ not in seen:
                    seen.add(succ)
                    stack.append((succ, iter(successors(succ))))
                    advanced = True
                    break
            if not advanced:
                stack.pop()
                order.append(index)
    order.reverse()
    return order


_VIRTUAL = -1


def _dominators(order: List[int], predecessors, roots: Optional[Iterable[int]] = None) -> Dict[int, int]:
    """Immediate dominators (Cooper, Harvey and Kennedy's iteration) of the nodes in `order`, a reverse
    postorder from `roots` (default: its first node). Several roots hang under one virtual root."""
    if not order:
        return {}
    roots = set(roots) if roots is not None else {order[0]}
    position = {index: number for number, index in enumerate(order)}
    position[_VIRTUAL] = -1
    idom: Dict[int, int] = {root: _VIRTUAL for root in roots}
    idom[_VIRTUAL] = _VIRTUAL

    def intersect(a: int, b: int) -> int:
        while a != b:
            while position[a] > position[b]:
                a = idom[a]
            while position[b] > position[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for index in order:
            if index in roots:
                continue
            chosen = None
            for pred in predecessors(index):
                if pred in idom and pred in position:
                    chosen = pred if chosen is None else intersect(pred, chosen)
            if chosen is not None and idom.get(index) != chosen:
                idom[index] = chosen
                changed = True
    del idom[_VIRTUAL]
    return {index: (parent if parent != _VIRTUAL else index) for index, parent in idom.items()}


def _chain_contains(idom: Dict[int, int], start: int, wanted: int) -> bool:
    """`wanted` is `start` or one of its (post)dominators."""
    current = start
    while current in idom:
        if current == wanted:
            return True
        parent = idom[current]
        if parent == current:
            return False
        current = parent
    return False
