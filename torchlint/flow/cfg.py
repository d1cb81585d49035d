"""A statement-level control-flow graph of one function (or module) body.

Each simple statement (`a = f(x)`, `loss.backward()`, `continue`) is a node;
a compound statement contributes the nodes that evaluate its header:

- `if test:` a *test* node, then one *assume* node per branch (`test` holds,
  `test` does not hold) at the head of each branch, also when there is no
  `else`: the statements after `if skip: continue` are reached only through
  the "does not hold" assume, so dominance alone says they run only when
  `skip` is false. An assume also says which values its branch knows:
  `h is None` holding (or `h is not None` not holding) means `h` is `None`
  there (`Assume.known_none`, `ControlFlowGraph.known_none`);
- `for target in iterable:` an *iter* node (the iterable is evaluated once),
  the loop's *head* (ask for the next item; the back edge and `continue`
  return here, and the loop leaves from here), and a *bind* node that assigns
  the target, so the target is an ordinary definition at the top of every
  iteration;
- `while test:` the *head* evaluates `test`, then assumes as for `if`
  (`while True:` has no way out but `break`);
- `with items:` one node that evaluates the items and binds their `as` names;
- `try:` exceptions are modelled as leaving from the point before the body
  (an edge from there to each handler), so the body stays a straight line
  for dominance; `else` follows the body, `finally` every way out of them;
  a `raise` in the body goes to the handlers; a handler node assumes its
  exception was raised (its branch runs only then);
- `match subject:` a test node, then one *case* node per case, each tried
  after the previous one failed (`case _:` cannot fail);
- a nested `def` or `class` is one opaque node that binds its name.

`return` goes to the exit, `break` to what follows its loop. A `raise` (and
`sys.exit(...)`, `exit()`, `quit()`, `os._exit(...)`) outside any handler
leaves the function exceptionally: it goes to the exit too, but the graph
names it in `raising`, so a loop's iteration does not count it as a way
through the iteration (`torchlint.flow.dataflow.Iteration`).
Definitions are recorded per node with the name (dotted for attributes:
`self.h`, `p.grad`), the operator, and the value where the source gives one
(the matching element when a tuple is unpacked from a tuple); a name a
comprehension binds is its own, neither a definition nor a read of the
function's (`torchlint.flow.scopes`). `effects`, a
caller's hook, may add definitions that no assignment spells (an in-place
update like `h.detach_()`); this module gives them no meaning of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple, Union

import libcst as cst

from torchlint.flow import scopes
from torchlint.names import dotted_name, target_names
from torchlint.walk import children

Owner = Union[cst.Module, cst.FunctionDef, cst.ClassDef]
LoopStatement = Union[cst.For, cst.While]
# (name, effect) pairs a hook finds in a node: `("h", "detach")` for `h.detach_()`.
Effects = Callable[[cst.CSTNode], Iterable[Tuple[str, str]]]

ENTRY, EXIT = "entry", "exit"
STATEMENT, TEST, ASSUME, ITER, HEAD, BIND, WITH, HANDLER, CASE, DEF = (
    "statement", "test", "assume", "iter", "head", "bind", "with", "handler", "case", "def")


@dataclass(frozen=True, eq=False)
class Definition:
    """One name given a value at one node.

    `kind`: `assign` (`=`, `:=`, an annotated assignment), `augmented`
    (`+=`...), `target` (a `for`/`with`/`except`/`case` target, an import, a
    nested `def`/`class`), `parameter`, `del`, `effect` (from the hook), or
    `start` (the value a name has when an iteration begins; see
    `torchlint.flow.dataflow.Iteration`).
    """

    index: int
    name: str
    node: int
    kind: str
    operator: str = "="
    value: Optional[cst.BaseExpression] = None
    syntax: Optional[cst.CSTNode] = None
    unpacked: bool = False  # one of several names unpacked from `value` as a whole
    effect: Optional[str] = None
    position: Optional[Tuple[int, ...]] = ()  # where in `value` an unpacked name sits: (1, 0) for `h` in
    # `out, (h, c) = lstm(...)`; None behind a starred target

    @cached_property
    def reads_itself(self) -> bool:
        """`loss += x`, `h = rnn(x, h)`: the new value is computed from the old one."""
        if self.kind == "augmented":
            return True
        return self.value is not None and scopes.reads(self.value, self.name)


@dataclass(frozen=True)
class Assume:
    """At the head of a branch: `test` holds (or does not) from here on."""

    test: cst.BaseExpression
    holds: bool
    statement: cst.CSTNode  # the `if`, `while`, `match` case or `except` handler whose branch this is

    @cached_property
    def known_none(self) -> FrozenSet[str]:
        """The names whose value the branch knows to be `None`: `h` where `h is None` holds or
        `h is not None` does not (also through `not`, and each side of an `and` that holds or an `or`
        that does not)."""
        if isinstance(self.statement, (cst.If, cst.While)):
            return _none_on_branch(self.test, self.holds)
        return frozenset()

    @cached_property
    def one_of_none(self) -> FrozenSet[str]:
        """Names of which the branch knows one at least to be `None`: the `else` of `if a is not None and b is
        not None:`, the body of `if a is None or b is None:`. Empty when it knows no such choice."""
        if isinstance(self.statement, (cst.If, cst.While)):
            return _none_on_either(self.test, self.holds)
        return frozenset()


@dataclass(eq=False)
class Node:
    index: int
    kind: str
    syntax: Optional[cst.CSTNode]  # a small statement, or the compound statement whose header this is
    line: Optional[cst.CSTNode] = None  # the statement line holding a small statement
    expressions: Tuple[cst.CSTNode, ...] = ()  # what this node evaluates, in order
    definitions: List[Definition] = field(default_factory=list)
    succ: List[int] = field(default_factory=list)
    pred: List[int] = field(default_factory=list)
    assume: Optional[Assume] = None
    loops: Tuple[LoopStatement, ...] = ()  # the loops around the node, outermost first
    contexts: Tuple[cst.BaseExpression, ...] = ()  # `with` items around the node, outermost first
    branches: Tuple[Tuple[int, bool], ...] = ()  # (id of an `if`/`case`, branch) the node sits in, syntactically


@dataclass(eq=False)
class LoopRegion:
    """A `for` or `while` statement in the graph."""

    statement: LoopStatement
    head: int
    body: frozenset  # node indices of the body (nested statements included; not `else`)
    latches: Tuple[int, ...]  # body nodes with an edge back to the head (the back edge, `continue`)
    entry: Tuple[int, ...]  # nodes outside the body that lead into the head


class ControlFlowGraph:
    def __init__(self, owner: Owner, effects: Optional[Effects] = None, walrus: bool = True,
                 unbound: FrozenSet[str] = frozenset()) -> None:
        """`walrus=False` when the source has no `:=`: expressions are then not searched for one. `unbound`: names
        the module imports only as other functions' locals (`scopes.bound_only_in_functions`); a statement of
        this function (not of a module's top level) that reads one, and does not bind it itself, raises NameError."""
        self.owner = owner
        builder = _Builder(effects, walrus)
        if unbound and isinstance(owner, cst.FunctionDef):
            builder.unbound = unbound - scopes.names_bound_in(owner)
        self.nodes: List[Node] = builder.nodes
        self.entry = builder.new(ENTRY, owner, []).index
        for name in _parameters(owner):
            builder.define(self.nodes[self.entry], name, "parameter")
        body = block_of(owner)
        out = builder.block(body, [self.entry], _Scope())
        self.exit = builder.new(EXIT, None, out).index
        for node in builder.returns + builder.raises:
            builder.edge(node, self.exit)
        # Nodes that leave the function by an exception: not a way through an iteration.
        self.raising: frozenset = frozenset(builder.raises)
        self.definitions: List[Definition] = builder.definitions
        self.loops: Dict[int, LoopRegion] = builder.regions
        self._iterables: Dict[int, int] = builder.iterables

    def known_none(self, name: str) -> FrozenSet[int]:
        """The assume nodes from which `name` is known to be `None` (`if h is not None: ...` has one, at
        the head of its missing `else`), until something assigns it."""
        return frozenset(node.index for node in self.nodes
                         if node.assume is not None and name in node.assume.known_none)

    def against_truth(self, name: str, truth: bool) -> FrozenSet[int]:
        """The assume nodes of `if name:` / `if not name:` (and `while`) branches that `name` never takes while
        its truth is `truth` (a parameter the call passes `True`, say), until something assigns it."""
        against = set()
        for node in self.nodes:
            assume = node.assume
            if assume is None or not isinstance(assume.statement, (cst.If, cst.While)):
                continue
            test, holds = assume.test, assume.holds
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                test, holds = test.expression, not holds
            if isinstance(test, cst.Name) and test.value == name and holds != truth:
                against.add(node.index)
        return frozenset(against)

    def one_of_none(self, names: FrozenSet[str]) -> FrozenSet[int]:
        """The assume nodes from which one of a few names, all of them among `names`, is known to be `None`
        (the `else` of `if a is not None and b is not None:`, with `a` and `b` in `names`)."""
        return frozenset(node.index for node in self.nodes if node.assume is not None
                         and node.assume.one_of_none and node.assume.one_of_none <= names)

    def iterable_node(self, loop: cst.For) -> Optional[Node]:
        """The node that evaluates a `for` statement's iterable: where the statement starts to run."""
        index = self._iterables.get(id(loop))
        return self.nodes[index] if index is not None else None

    def region(self, loop: LoopStatement) -> Optional[LoopRegion]:
        return self.loops.get(id(loop))

    def enclosing_loops(self, region: LoopRegion) -> List[LoopRegion]:
        """The loops of this graph whose body holds `region`'s loop (not the loop itself)."""
        return [other for other in self.loops.values() if other is not region and region.head in other.body]


@dataclass(frozen=True)
class _Scope:
    loops: Tuple[LoopStatement, ...] = ()
    contexts: Tuple[cst.BaseExpression, ...] = ()
    branches: Tuple[Tuple[int, bool], ...] = ()

    def inside(self, **changes) -> "_Scope":
        return _Scope(**{**self.__dict__, **changes})


class _Builder:
    def __init__(self, effects: Optional[Effects], walrus: bool) -> None:
        self.effects = effects
        self.walrus = walrus
        self.nodes: List[Node] = []
        self.definitions: List[Definition] = []
        self.regions: Dict[int, LoopRegion] = {}
        self.iterables: Dict[int, int] = {}  # a `for` statement -> the node that evaluates its iterable
        self.returns: List[int] = []
        self.raises: List[int] = []  # raising nodes no handler of the function catches
        self.handled: List[List[int]] = []  # per open `try` with handlers: the raising nodes of its body
        self.jumps: List[Tuple[List[int], List[int]]] = []  # per open loop: (continue sources, break sources)
        self.unbound: FrozenSet[str] = frozenset()  # names that raise NameError when read here

    # --- nodes and edges ------------------------------------------------------------

    def new(self, kind: str, syntax: Optional[cst.CSTNode], preds: Sequence[int], scope: Optional[_Scope] = None,
            expressions: Sequence[cst.CSTNode] = (), line: Optional[cst.CSTNode] = None,
            assume: Optional[Assume] = None) -> Node:
        scope = scope or _Scope()
        node = Node(len(self.nodes), kind, syntax, line, tuple(expressions), assume=assume, loops=scope.loops,
                    contexts=scope.contexts, branches=scope.branches)
        self.nodes.append(node)
        for pred in preds:
            self.edge(pred, node.index)
        for expression in expressions if self.walrus else ():
            for target, value in _walrus(expression):
                self.define(node, target, "assign", value=value, syntax=expression)
        return node

    def edge(self, source: int, target: int) -> None:
        if target not in self.nodes[source].succ:
            self.nodes[source].succ.append(target)
            self.nodes[target].pred.append(source)

    def define(self, node: Node, name: str, kind: str, operator: str = "=", value=None, syntax=None,
               unpacked: bool = False, effect: Optional[str] = None,
               position: Optional[Tuple[int, ...]] = ()) -> None:
        definition = Definition(len(self.definitions), name, node.index, kind, operator, value, syntax, unpacked,
                                effect, position)
        self.definitions.append(definition)
        node.definitions.append(definition)

    def _hook(self, node: Node, syntax: cst.CSTNode) -> None:
        if self.effects is not None:
            for name, effect in self.effects(syntax):
                self.define(node, name, "effect", syntax=syntax, effect=effect)

    # --- statements -----------------------------------------------------------------

    def block(self, statements: Sequence[cst.CSTNode], preds: List[int], scope: _Scope) -> List[int]:
        for statement in statements:
            preds = self.statement(statement, preds, scope)
        return preds

    def statement(self, statement: cst.CSTNode, preds: List[int], scope: _Scope) -> List[int]:
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in statement.body:
                if self.unbound and self._reads_unbound((small,)):
                    return self._raising(small, statement, preds, scope)
                preds = self.small(small, statement, preds, scope)
            return preds
        if self.unbound and self._reads_unbound(_header(statement)):
            return self._raising(statement, None, preds, scope)
        handler = getattr(self, "_" + type(statement).__name__, None)
        if handler is not None:
            return handler(statement, preds, scope)
        return preds

    def _reads_unbound(self, expressions: Sequence[cst.CSTNode]) -> bool:
        return any(scopes.reads_any(expression, self.unbound) for expression in expressions)

    def _raising(self, syntax: cst.CSTNode, line: Optional[cst.CSTNode], preds: List[int], scope: _Scope) -> List[int]:
        """A statement that raises before it does anything (NameError): it leaves as a `raise` does."""
        node = self.new(STATEMENT, syntax, preds, scope, (), line)
        (self.handled[-1] if self.handled else self.raises).append(node.index)
        return []

    def small(self, small: cst.BaseSmallStatement, line: cst.CSTNode, preds: List[int], scope: _Scope) -> List[int]:
        node = self.new(STATEMENT, small, preds, scope, (small,), line)
        if isinstance(small, cst.Assign):
            for target in small.targets:
                self._targets(node, target.target, small.value, "assign", "=", small)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            self._targets(node, small.target, small.value, "assign", "=", small)
        elif isinstance(small, cst.AugAssign):
            operator = small.operator.__class__.__name__
            self._targets(node, small.target, small.value, "augmented", _AUGMENTED.get(operator, "?="), small)
        elif isinstance(small, cst.Del):
            for name in target_names(small.target):
                self.define(node, name, "del", syntax=small)
        elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
            for alias in small.names:
                bound = alias.asname.name if alias.asname is not None else alias.name
                name = dotted_name(bound)
                if name is not None:
                    self.define(node, name if alias.asname is not None else name.split(".")[0], "target",
                                syntax=small)
        self._hook(node, small)
        if isinstance(small, cst.Continue) and self.jumps:
            self.jumps[-1][0].append(node.index)
            return []
        if isinstance(small, cst.Break) and self.jumps:
            self.jumps[-1][1].append(node.index)
            return []
        if isinstance(small, cst.Return):
            self.returns.append(node.index)
            return []
        if isinstance(small, cst.Raise) or _exits_process(small):
            (self.handled[-1] if self.handled else self.raises).append(node.index)
            return []
        return [node.index]

    def _targets(self, node: Node, target: cst.BaseExpression, value: cst.BaseExpression, kind: str, operator: str,
                 syntax: cst.CSTNode, unpacked: bool = False, position: Optional[Tuple[int, ...]] = ()) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            elements = [element.value for element in target.elements]
            values = [element.value for element in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else []
            paired = len(values) == len(elements) and not any(
                isinstance(part, cst.StarredElement) for part in elements + values)
            for index, element in enumerate(elements):
                if paired:
                    self._targets(node, element, values[index], kind, operator, syntax)
                else:
                    inner = position + (index,) if position is not None else None
                    self._targets(node, element, value, kind, operator, syntax, unpacked=True, position=inner)
            return
        if isinstance(target, cst.StarredElement):
            self._targets(node, target.value, value, kind, operator, syntax, unpacked=True, position=None)
            return
        name = dotted_name(target)
        if name is not None:
            self.define(node, name, kind, operator, value, syntax, unpacked, position=position if unpacked else ())

    def _If(self, statement: cst.If, preds: List[int], scope: _Scope) -> List[int]:
        test = self.new(TEST, statement, preds, scope, (statement.test,))
        out = []
        for holds in (True, False):
            inner = scope.inside(branches=scope.branches + ((id(statement), holds),))
            assume = self.new(ASSUME, statement, [test.index], inner, assume=Assume(statement.test, holds, statement))
            if holds:
                out += self.block(block_of(statement), [assume.index], inner)
            elif isinstance(statement.orelse, cst.If):
                out += self.statement(statement.orelse, [assume.index], inner)
            elif isinstance(statement.orelse, cst.Else):
                out += self.block(block_of(statement.orelse), [assume.index], inner)
            else:
                out.append(assume.index)
        return out

    def _For(self, statement: cst.For, preds: List[int], scope: _Scope) -> List[int]:
        iterable = self.new(ITER, statement, preds, scope, (statement.iter,))
        self.iterables[id(statement)] = iterable.index
        self._hook(iterable, statement)
        inner = scope.inside(loops=scope.loops + (statement,))
        head = self.new(HEAD, statement, [iterable.index], inner)
        bind = self.new(BIND, statement, [head.index], inner, (statement.target,))
        self._targets(bind, statement.target, statement.iter, "target", "=", statement, unpacked=True)
        return self._loop(statement, head, [bind.index], (iterable.index,), inner, scope, [head.index])

    def _While(self, statement: cst.While, preds: List[int], scope: _Scope) -> List[int]:
        inner = scope.inside(loops=scope.loops + (statement,))
        head = self.new(HEAD, statement, preds, inner, (statement.test,))
        body = self.new(ASSUME, statement, [head.index], inner, assume=Assume(statement.test, True, statement))
        exits = []
        if not _always_true(statement.test):
            exits.append(self.new(ASSUME, statement, [head.index], scope,
                                  assume=Assume(statement.test, False, statement)).index)
        return self._loop(statement, head, [body.index], tuple(preds), inner, scope, exits)

    def _loop(self, statement: LoopStatement, head: Node, body_preds: List[int], entry: Tuple[int, ...],
              inner: _Scope, scope: _Scope, exits: List[int]) -> List[int]:
        first = len(self.nodes)
        self.jumps.append(([], []))
        out = self.block(block_of(statement), body_preds, inner)
        continues, breaks = self.jumps.pop()
        latches = tuple(out) + tuple(continues)
        for latch in latches:
            self.edge(latch, head.index)
        body = frozenset(range(first, len(self.nodes))) | frozenset(body_preds)
        self.regions[id(statement)] = LoopRegion(statement, head.index, body, latches, entry)
        if statement.orelse is not None:
            exits = self.block(block_of(statement.orelse), exits, scope)
        return exits + breaks

    def _With(self, statement: cst.With, preds: List[int], scope: _Scope) -> List[int]:
        items = tuple(item.item for item in statement.items)
        node = self.new(WITH, statement, preds, scope, items)
        for item in statement.items:
            if item.asname is not None:
                self._targets(node, item.asname.name, item.item, "target", "=", statement, unpacked=True)
        return self.block(block_of(statement), [node.index], scope.inside(contexts=scope.contexts + items))

    def _Try(self, statement: Union[cst.Try, cst.TryStar], preds: List[int], scope: _Scope) -> List[int]:
        if statement.handlers:
            self.handled.append([])
        out = self.block(block_of(statement), preds, scope)
        raised = self.handled.pop() if statement.handlers else []
        if statement.orelse is not None:
            out = self.block(block_of(statement.orelse), out, scope)
        for handler in statement.handlers:
            # The handler runs only when the body raised: a branch, whose "test" is the exception caught.
            caught = handler.type if handler.type is not None else cst.Name("BaseException")
            node = self.new(HANDLER, handler, preds + raised, scope,
                            (handler.type,) if handler.type is not None else (),
                            assume=Assume(caught, True, handler))
            if handler.name is not None:
                self._targets(node, handler.name.name, handler.type, "target", "=", handler, unpacked=True)
            out += self.block(block_of(handler), [node.index], scope)
        if statement.finalbody is not None:
            out = self.block(block_of(statement.finalbody), out, scope)
        return out

    _TryStar = _Try

    def _Match(self, statement: cst.Match, preds: List[int], scope: _Scope) -> List[int]:
        subject = self.new(TEST, statement, preds, scope, (statement.subject,))
        out: List[int] = []
        tried = [subject.index]
        for case in statement.cases:
            inner = scope.inside(branches=scope.branches + ((id(case), True),))
            guard = (case.guard,) if case.guard is not None else ()
            node = self.new(CASE, case, tried, inner, (case.pattern,) + guard,
                            assume=Assume(statement.subject, True, case))
            for name in _captures(case.pattern):
                self.define(node, name, "target", syntax=case)
            out += self.block(block_of(case), [node.index], inner)
            if _irrefutable(case):
                return out
            tried = [node.index]
        return out + tried

    def _FunctionDef(self, statement: Union[cst.FunctionDef, cst.ClassDef], preds: List[int],
                     scope: _Scope) -> List[int]:
        decorators = tuple(decorator.decorator for decorator in statement.decorators)
        node = self.new(DEF, statement, preds, scope, decorators)
        self.define(node, statement.name.value, "target", syntax=statement)
        return [node.index]

    _ClassDef = _FunctionDef


_AUGMENTED = {
    "AddAssign": "+=", "SubtractAssign": "-=", "MultiplyAssign": "*=", "DivideAssign": "/=",
    "FloorDivideAssign": "//=", "ModuloAssign": "%=", "PowerAssign": "**=", "MatrixMultiplyAssign": "@=",
    "BitOrAssign": "|=", "BitAndAssign": "&=", "BitXorAssign": "^=", "LeftShiftAssign": "<<=",
    "RightShiftAssign": ">>=",
}


def block_of(owner: cst.CSTNode) -> Sequence[cst.CSTNode]:
    """The statements of a module, or of the block a compound statement or clause owns."""
    if isinstance(owner, cst.Module):
        return owner.body
    body = getattr(owner, "body", None)
    if isinstance(body, cst.IndentedBlock):
        return body.body
    if isinstance(body, cst.SimpleStatementSuite):
        return (body,)
    return ()


def _parameters(owner: Owner) -> List[str]:
    return scopes.parameter_names(owner.params) if isinstance(owner, cst.FunctionDef) else []



def _walrus(expression: cst.CSTNode) -> List[Tuple[str, cst.BaseExpression]]:
    """`(n := len(batch))` anywhere in `expression`, lambdas excluded."""
    found = []
    stack = [expression]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Lambda):
            continue
        if isinstance(node, cst.NamedExpr) and isinstance(node.target, cst.Name):
            found.append((node.target.value, node.value))
        stack.extend(children(node))
    return found


# Calls that end the process: an exceptional exit like `raise` (`SystemExit`, or no return at all).
_PROCESS_EXITS = frozenset({"sys.exit", "exit", "quit", "os._exit"})


def _header(statement: cst.CSTNode) -> Tuple[cst.CSTNode, ...]:
    """What a compound statement evaluates before its body: an `if`'s test, a `with`'s items (a loop's header is
    left alone: the loop stays a loop of the graph)."""
    if isinstance(statement, cst.If):
        return (statement.test,)
    if isinstance(statement, cst.With):
        return tuple(item.item for item in statement.items)
    return ()


def _exits_process(small: cst.BaseSmallStatement) -> bool:
    """`sys.exit(1)`, `exit()`, `quit()`, `os._exit(1)` as a statement of its own."""
    return isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
        and dotted_name(small.value.func) in _PROCESS_EXITS


def _none_on_branch(test: cst.BaseExpression, holds: bool) -> FrozenSet[str]:
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _none_on_branch(test.expression, not holds)
    if isinstance(test, cst.BooleanOperation):
        both = isinstance(test.operator, cst.And) if holds else isinstance(test.operator, cst.Or)
        if both:  # `a and b` holds: both hold; `a or b` does not: neither holds
            return _none_on_branch(test.left, holds) | _none_on_branch(test.right, holds)
        return frozenset()
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        operator = test.comparisons[0].operator
        left, right = test.left, test.comparisons[0].comparator
        if _is_none(left):
            left, right = right, left
        name = dotted_name(left)
        if name is None or not _is_none(right):
            return frozenset()
        if isinstance(operator, cst.Is) and holds:
            return frozenset({name})
        if isinstance(operator, cst.IsNot) and not holds:
            return frozenset({name})
    return frozenset()


def _none_on_either(test: cst.BaseExpression, holds: bool) -> FrozenSet[str]:
    """`a is not None and b is not None` that does not hold, `a is None or b is None` that does: each side
    names one `None` (`_none_on_branch`), and one side at least holds that."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _none_on_either(test.expression, not holds)
    if not isinstance(test, cst.BooleanOperation):
        return frozenset()
    if not (isinstance(test.operator, cst.Or) if holds else isinstance(test.operator, cst.And)):
        return frozenset()
    names = set()
    for side in (test.left, test.right):
        one = _none_on_branch(side, holds) or _none_on_either(side, holds)
        if not one:
            return frozenset()  # a side that may hold for another reason: no name need be `None`
        names |= one
    return frozenset(names)


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _always_true(test: cst.BaseExpression) -> bool:
    if isinstance(test, cst.Name):
        return test.value == "True"
    return isinstance(test, cst.Integer) and test.value not in ("0", "0x0", "0o0", "0b0")


def _captures(pattern: cst.CSTNode) -> List[str]:
    found = []
    stack = [pattern]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.MatchAs, cst.MatchStar)) and node.name is not None:
            found.append(node.name.value)
        elif isinstance(node, cst.MatchMapping) and node.rest is not None:
            found.append(node.rest.value)
        stack.extend(children(node))
    return found


def _irrefutable(case: cst.MatchCase) -> bool:
    pattern = case.pattern
    return case.guard is None and isinstance(pattern, cst.MatchAs) and pattern.pattern is None
