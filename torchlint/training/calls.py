"""Loops that span functions: what a same-file function does when a loop calls it.

Real training code splits its loop: `loss = self.training_step(batch)` runs
the forward and `backward()` in one method while the caller's loop steps under
`% N`; `train_step(model, batch, optimizer)` does backward and step for the
loop that calls it. A call in a loop body to a function of the same file (for
`self.name(...)`, a method of the caller's class or of its bases in the file;
for `name(...)`, a function of the module or one nested in the caller) runs
that function's backwards and optimizer steps *at the call*: the site
collector records them at the call's point in the caller's graph, each with a
`Via` that says where it really is.

Only what the callee runs on every call is taken: statements of its body
outside any `if`, loop, `except` or `else` (through `with` and a `try`'s body
and `finally`), in a function whose only `return` is its last statement.
Calls are followed two functions deep; what each function does is computed
once per file.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import libcst as cst

from torchlint.flow import ControlFlowGraph, FunctionFlow
from torchlint.flow.cfg import block_of
from torchlint.names import ModuleNames, dotted_name, short_callee
from torchlint.training import graph, roles
from torchlint.walk import calls_in, preorder

MAX_DEPTH = 2


@dataclass(frozen=True)
class Via:
    """Where a site recorded at a call in the loop really is."""

    call: cst.Call  # the call in the loop's body
    function: cst.FunctionDef  # the function whose statement holds the site
    flow: FunctionFlow  # that function's flow, to trace the site's values in
    node: int  # the site's node in that flow's graph
    statement: cst.CSTNode  # the statement holding the site, in that function
    renames: Tuple[Tuple[str, str], ...] = ()  # the function's parameters -> what the loop passed
    order: int = 0  # the order in which the sites of one call of the loop run (they share the call's point)

    @property
    def name(self) -> str:
        return self.function.name.value

    def rename(self, dotted: Optional[str]) -> Optional[str]:
        """`optimizer` (a parameter) -> `self.opt` (what the loop passed); None for one the call did not pass."""
        if dotted is None:
            return None
        root, _, rest = dotted.partition(".")
        for parameter, argument in self.renames:
            if parameter == root:
                return argument + ("." + rest if rest else "")
        if root in _parameter_names(self.function) and root != "self":
            return None
        return dotted


@dataclass(frozen=True)
class Inner:
    """A backward or `.step()` a function runs on every call, where it is in that function."""

    call: cst.Call
    function: cst.FunctionDef
    flow: FunctionFlow
    node: int
    statement: cst.CSTNode


class Scope:
    """The questions `training.origin` asks of a loop, asked of the function a `Via` points into:
    the definitions reaching a node of its whole body (a parameter is a value from outside)."""

    def __init__(self, function: cst.FunctionDef, flow: FunctionFlow, functions: Optional["Functions"]) -> None:
        self.function = function
        self.flow = flow
        self.functions = functions

    def reaching(self, name: str, where: int):
        return self.flow.reaching(where, name)

    def values_at(self, name: str, where: int) -> List[Optional[cst.BaseExpression]]:
        return [d.value if d.kind == "assign" and not d.unpacked else None for d in self.reaching(name, where)]

    def guards_at(self, node: int) -> Tuple["_Test", ...]:
        """The `if` tests whose branches hold a node (what `_divides_when_needed` reads), from the graph."""
        nodes = self.flow.graph.nodes
        inside = set(nodes[node].branches)
        return tuple(_Test(other.assume.test) for other in nodes
                     if other.assume is not None and (id(other.assume.statement), other.assume.holds) in inside)


@dataclass(frozen=True)
class _Test:
    test: cst.BaseExpression


class Functions:
    """The functions of one file, by where they can be called from, and what each runs on every call."""

    def __init__(self, module: cst.Module, names: ModuleNames, walrus: bool = True) -> None:
        self.names = names
        self.walrus = walrus
        self._module = module
        self._call_sites: Optional[Dict[str, bool]] = None  # short callee -> called inside a loop somewhere
        self.module_functions: Dict[str, cst.FunctionDef] = {}
        self.methods: Dict[int, Dict[str, cst.FunctionDef]] = {}  # id(class) -> its methods
        self.bases: Dict[int, List[cst.ClassDef]] = {}  # id(class) -> its base classes defined in the file
        self.owner_class: Dict[int, cst.ClassDef] = {}  # id(method) -> its class
        self.nested: Dict[int, Dict[str, cst.FunctionDef]] = {}  # id(function) -> functions defined in it
        self._work: Dict[int, Tuple[Inner, ...]] = {}
        self._flows: Dict[int, FunctionFlow] = {}
        classes: Dict[str, cst.ClassDef] = {}
        self._classes: List[cst.ClassDef] = []
        self._index(block_of(module), None, None, classes)
        for class_def in self._classes:
            self.bases[id(class_def)] = [classes[name] for name in
                                         (dotted_name(base.value) for base in class_def.bases)
                                         if name in classes and classes[name] is not class_def]

    def _index(self, statements: Sequence[cst.CSTNode], function: Optional[cst.FunctionDef],
               class_def: Optional[cst.ClassDef], classes: Dict[str, cst.ClassDef]) -> None:
        for statement in statements:
            if isinstance(statement, cst.FunctionDef):
                name = statement.name.value
                if class_def is not None and function is None:
                    self.methods.setdefault(id(class_def), {})[name] = statement
                    self.owner_class[id(statement)] = class_def
                elif function is not None:
                    self.nested.setdefault(id(function), {})[name] = statement
                else:
                    self.module_functions[name] = statement
                self._index(block_of(statement), statement, None, classes)
            elif isinstance(statement, cst.ClassDef):
                self._classes.append(statement)
                if function is None and class_def is None:
                    classes[statement.name.value] = statement
                self._index(block_of(statement), None, statement, classes)
            elif isinstance(statement, (cst.If, cst.Try, cst.With)) and function is None:
                # `if TYPE_CHECKING:`, `try: ... except ImportError:` blocks around definitions
                for owner in _blocks_of(statement):
                    self._index(block_of(owner), function, class_def, classes)

    def callee(self, call: cst.Call, caller: Optional[cst.FunctionDef]) -> Optional[cst.FunctionDef]:
        """The function of this file that `call` runs: `self.step(...)` in a method, `step(...)`."""
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            if caller is None or id(caller) not in self.owner_class:
                return None
            return self._method(self.owner_class[id(caller)], func.attr.value, 0)
        if isinstance(func, cst.Name):
            if caller is not None:
                nested = self.nested.get(id(caller), {}).get(func.value)
                if nested is not None:
                    return nested
            found = self.module_functions.get(func.value)
            return found if found is not caller else None
        return None

    def _method(self, class_def: cst.ClassDef, name: str, depth: int) -> Optional[cst.FunctionDef]:
        method = self.methods.get(id(class_def), {}).get(name)
        if method is not None or depth > 3:
            return method
        for base in self.bases.get(id(class_def), ()):
            found = self._method(base, name, depth + 1)
            if found is not None:
                return found
        return None

    def flow(self, function: cst.FunctionDef) -> FunctionFlow:
        flow = self._flows.get(id(function))
        if flow is None:
            flow = self._flows[id(function)] = FunctionFlow(
                ControlFlowGraph(function, graph.inplace_effects, self.walrus))
        return flow

    def runs(self, function: cst.FunctionDef) -> Tuple[Inner, ...]:
        """The backwards and `.step()` calls `function` runs on every call (through the functions it calls)."""
        known = self._work.get(id(function))
        if known is not None:
            return known
        self._work[id(function)] = ()  # recursion stops here
        found: List[Inner] = []
        if _returns_only_at_end(function):
            flow = None
            for statement in _every_call_statements(block_of(function)):
                for call in calls_in(statement):
                    if _interesting(call, self.names):
                        flow = flow or self.flow(function)
                        node = _node_of(flow, statement)
                        if node is not None:
                            found.append(Inner(call, function, flow, node, statement))
        self._work[id(function)] = tuple(found)
        return self._work[id(function)]

    def inlined(self, call: cst.Call, caller: Optional[cst.FunctionDef]) -> Iterator[Tuple[Inner, Via]]:
        """What a call in a loop runs on every call, with where it is, in the order it runs; two functions deep."""
        for order, (inner, via) in enumerate(self._inlined(call, caller, (), 1)):
            yield inner, dataclasses.replace(via, order=order)

    def _inlined(self, call: cst.Call, caller: Optional[cst.FunctionDef], renames: Tuple[Tuple[str, str], ...],
                 depth: int) -> Iterator[Tuple[Inner, Via]]:
        function = self.callee(call, caller)
        if function is None or function is caller:
            return
        here = _compose(_renames(call, function), renames)
        own = {id(inner.call): inner for inner in self.runs(function)}
        nested = depth < MAX_DEPTH and _returns_only_at_end(function)
        if not own and not nested:
            return
        for statement in _every_call_statements(block_of(function)):
            for inner_call in calls_in(statement):
                inner = own.get(id(inner_call))
                if inner is not None:
                    yield inner, Via(call, function, inner.flow, inner.node, inner.statement, here)
                elif nested and not _interesting(inner_call, self.names):
                    for deeper, via in self._inlined(inner_call, function, here, depth + 1):
                        yield deeper, dataclasses.replace(via, call=call)  # recorded at the loop's own call

    def by_name(self, callee: str) -> Optional[cst.FunctionDef]:
        """The function a call of `callee` runs, read without the caller: `compute_loss` of the module,
        or `self.compute_loss` when one class of the file defines it."""
        if callee.startswith("self."):
            found = [methods[callee[5:]] for methods in self.methods.values() if callee[5:] in methods]
            return found[0] if len(found) == 1 else None
        return self.module_functions.get(callee)

    def method_of_class(self, class_name: str, method: str) -> Optional[cst.FunctionDef]:
        """`next_batch` of the file's one class named `class_name` (or of its bases in the file)."""
        found = [class_def for class_def in self._classes if class_def.name.value == class_name]
        return self._method(found[0], method, 0) if len(found) == 1 else None

    def returns(self, function: cst.FunctionDef) -> List[Tuple[cst.BaseExpression, int]]:
        """Each value `function` returns, with the node of its `return` in the function's graph."""
        return [(node.syntax.value, node.index) for node in self.flow(function).graph.nodes
                if isinstance(node.syntax, cst.Return) and node.syntax.value is not None]

    def called_in_loop(self, function: cst.FunctionDef) -> Optional[bool]:
        """This file calls `function` from inside a loop (yes), only outside loops (no: `main()` under
        `if __name__ == "__main__":`), or not at all (unknown: another file, or an entry point, may)."""
        if self._call_sites is None:
            self._call_sites = {}
            self._index_calls(block_of(self._module), False)
        return self._call_sites.get(function.name.value)

    def _index_calls(self, statements: Sequence[cst.CSTNode], in_loop: bool) -> None:
        for statement in statements:
            if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                for call in calls_in(statement):
                    callee = short_callee(call.func)
                    if callee is not None:
                        self._call_sites[callee] = self._call_sites.get(callee, False) or in_loop
                continue
            if isinstance(statement, cst.Match):
                continue
            inside = in_loop or isinstance(statement, (cst.For, cst.While))
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                inside = False  # a definition runs where it is called
            for owner in _blocks_of(statement):
                self._index_calls(block_of(owner), inside)

    def has_work(self, call: cst.Call, caller: Optional[cst.FunctionDef]) -> bool:
        """`call` runs a backward of this file's functions on every call."""
        return any(roles.classify_backward(inner.call, self.names) is not None
                   for inner, _ in self.inlined(call, caller))


def _blocks_of(statement: cst.CSTNode) -> List[cst.CSTNode]:
    """The owners of the blocks of an `if` (its `elif`s and `else`), `try` or `with`."""
    if isinstance(statement, cst.If):
        return [statement] + (_blocks_of(statement.orelse) if isinstance(statement.orelse, cst.If)
                              else [statement.orelse] if statement.orelse is not None else [])
    if isinstance(statement, cst.Try):
        return [statement, *statement.handlers] + [part for part in (statement.orelse, statement.finalbody) if part]
    return [statement]


def _interesting(call: cst.Call, names: ModuleNames) -> bool:
    """A backward (not `autograd.grad`, which only returns gradients), or a `.step()`."""
    backward = roles.classify_backward(call, names)
    if backward is not None:
        return backward[0] != "grad"
    func = call.func
    return isinstance(func, cst.Attribute) and func.attr.value == "step"


def _every_call_statements(statements: Sequence[cst.CSTNode]) -> Iterator[cst.CSTNode]:
    """The simple statement lines that run whenever the block runs to its end."""
    for statement in statements:
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            yield statement
        elif isinstance(statement, cst.With):
            yield from _every_call_statements(block_of(statement))
        elif isinstance(statement, (cst.Try, cst.TryStar)):
            yield from _every_call_statements(block_of(statement))
            if statement.finalbody is not None:
                yield from _every_call_statements(block_of(statement.finalbody))


def _returns_only_at_end(function: cst.FunctionDef) -> bool:
    """No `return` (nor `yield`) but, maybe, the last statement of the body: every call runs the whole body."""
    body = list(block_of(function))
    last = body[-1] if body else None
    for part in preorder(function.body):
        if isinstance(part, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and part is not function:
            continue
        if isinstance(part, (cst.Yield, cst.Await)):
            return False
        if isinstance(part, cst.Return):
            if not (isinstance(last, cst.SimpleStatementLine) and part in last.body):
                return False
    return True


def _node_of(flow: FunctionFlow, statement: cst.CSTNode) -> Optional[int]:
    for node in flow.graph.nodes:
        if node.line is statement or node.syntax is statement:
            return node.index
    return None


def _parameter_names(function: cst.FunctionDef) -> List[str]:
    parameters = function.params
    every = [*parameters.posonly_params, *parameters.params, *parameters.kwonly_params]
    return [parameter.name.value for parameter in every]


def _renames(call: cst.Call, function: cst.FunctionDef) -> Tuple[Tuple[str, str], ...]:
    """The callee's parameters bound to names of the caller: `train_step(net, opt)` -> (model, net), (optimizer, opt)."""
    positional = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    if positional and positional[0] == "self" and isinstance(call.func, cst.Attribute):
        positional = positional[1:]
    pairs = []
    index = 0
    for arg in call.args:
        if arg.star:
            break
        if arg.keyword is not None:
            parameter = arg.keyword.value
        elif index < len(positional):
            parameter = positional[index]
            index += 1
        else:
            continue
        argument = dotted_name(arg.value)
        if argument is not None:
            pairs.append((parameter, argument))
    return tuple(pairs)


def _compose(inner: Tuple[Tuple[str, str], ...], outer: Tuple[Tuple[str, str], ...]) -> Tuple[Tuple[str, str], ...]:
    """Renames through two calls: the inner call's arguments are the outer function's names."""
    composed = []
    for parameter, argument in inner:
        root, _, rest = argument.partition(".")
        for outer_parameter, outer_argument in outer:
            if outer_parameter == root:
                argument = outer_argument + ("." + rest if rest else "")
                break
        composed.append((parameter, argument))
    return tuple(composed)
