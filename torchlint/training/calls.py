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
and `finally`), in a function whose only `return` is its last statement;
and the statements of an `if` (or its `else`) that tests a parameter the
function never rebinds (`if update_grad: scaler.step(optimizer)`), which run
when what the call passes for it holds: a literal settles it (`True`, the
default when nothing is passed), an expression becomes a condition of the
site at the call (`update_grad=(i + 1) % accum == 0`: the step runs under the
loop's window condition). Calls are followed two functions deep; what each
function does is computed once per file.

A loop also spans files (`Functions.remote`): a call of a function of another
file of the project (`from utils import train_step`), or of an object whose
class is one of the project's (`scaler(loss, opt)` runs its `__call__`,
`trainer.step(loss)` its `step`), when the project's index says that
function or method runs a backward (`torchlint.project`). What the object is
comes from the file's own bindings of its name (`loss_scaler =
NativeScaler()`), or, for a parameter of the loop's function, from every call
of that function in the project (`main.py` passes the scaler it built); when
they do not all say the same class, it is unknown and nothing is followed.
The sites found in another file are recorded at the loop's call with a `Via`
that names that file (`Via.elsewhere`); a backward's loss is then the
argument the call passes for it, when the backward takes the parameter as it
came in (else unknown).

A method a class inherits from a framework's class (`training_step` of a `transformers.Trainer` subclass
that does not define it) runs the framework's code as `training.frameworks` models it, recorded at the
loop's call the way another file's is; an override in the file wins, and a class with a base of another
package (which may define the method) is unknown.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple

import libcst as cst

from torchlint.flow import ControlFlowGraph, FunctionFlow
from torchlint.flow.cfg import block_of
from torchlint.names import ModuleNames, dotted_name, int_value, keyword, short_callee, unmoved
from torchlint.training import frameworks, graph, roles
from torchlint.walk import calls_in, children, preorder

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
    # The file the function is in, when it is another file of the project (`torchlint.project.ProjectModule`).
    elsewhere: Optional[object] = None
    # The site runs when this expression of the loop's call holds (`holds` False: when it does not): what the
    # call passes for the parameter an `if` of the function tests (`update_grad=(i + 1) % accum == 0`).
    condition: Optional[Tuple[cst.BaseExpression, bool]] = None
    parameter: Optional[str] = None  # that parameter, `update_grad`
    site: Optional[cst.Call] = None  # the backward or step call in the function (the site's `node` in this file)
    bound: bool = False  # the call runs a method of an object (`scaler(...)` its `__call__`): it passes no `self`
    direct: bool = True  # `function` is the one the loop's call runs (not one that function calls in turn)

    @property
    def name(self) -> str:
        return self.function.name.value

    def names(self, here: ModuleNames) -> ModuleNames:
        """The names of the file the function is in (`here`: the loop's file)."""
        return self.elsewhere.names if self.elsewhere is not None else here

    def passed(self, value: Optional[cst.BaseExpression]) -> Optional[cst.BaseExpression]:
        """What the loop's call passes for `value`, a parameter the function reads as it came in (no binding of
        it reaches the site): `loss` of the loop for `loss` of `__call__(self, loss, ...)`; else None."""
        if not self.direct or not isinstance(value, cst.Name) or value.value == "self":
            return None
        if any(d.kind != "parameter" for d in self.flow.reaching(self.node, value.value)):
            return None
        return argument_for(self.call, self.function, value.value, self.bound or None)

    def rename(self, dotted: Optional[str]) -> Optional[str]:
        """`optimizer` (a parameter) -> `self.opt` (what the loop passed); None for one the call did not pass."""
        if dotted is None:
            return None
        root, _, rest = dotted.partition(".")
        for parameter, argument in self.renames:
            if parameter == root:
                return argument + ("." + rest if rest else "")
        if root in parameter_names(self.function) and root != "self":
            return None
        return dotted


@dataclass(frozen=True)
class Inner:
    """A backward or `.step()` a function runs on every call, or when a parameter it tests holds
    (`condition`: the parameter, and whether the site runs where it is true), where it is in that function."""

    call: cst.Call
    function: cst.FunctionDef
    flow: FunctionFlow
    node: int
    statement: cst.CSTNode
    condition: Optional[Tuple[str, bool]] = None


@dataclass(frozen=True)
class Remote:
    """What a call in a loop runs in another file of the project (or through an object of a class of this file):
    `function`, in `module` (None: this file); `receiver`, the loop's name for the object the function is a
    method of (`self` there)."""

    module: Optional[object]  # torchlint.project.ProjectModule
    function: cst.FunctionDef
    receiver: Optional[str] = None


@dataclass(frozen=True)
class Passing:
    """One place the file runs a function of its own, with what it passes: `train(model, accum=4)`; the arguments
    a wrapper's result is called with (`init_distributed(dp=2)(train)(accum=4)`, `wrap(train)(accum=4)`: by keyword
    only, since the wrapper may add arguments of its own before them); or a `functools.partial(train, accum=4)`
    called at once (its arguments, then the call's)."""

    arguments: Tuple[cst.Arg, ...]
    caller: Optional[cst.FunctionDef]  # the function the call is in (None: the module's top level)
    keywords_only: bool = False

    def argument(self, function: cst.FunctionDef, parameter: str) -> Tuple[Optional[cst.BaseExpression], bool]:
        """(what this passes for `function`'s `parameter`, whether it is known not to pass it: then the default
        applies). Unknown (None, False) where `*args`/`**kwargs` or the wrapper may pass it."""
        for arg in self.arguments:
            if arg.keyword is not None and arg.keyword.value == parameter:
                return arg.value, False
        if any(arg.star for arg in self.arguments) or self.keywords_only:
            return None, False
        positional = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
        given = [arg.value for arg in self.arguments if arg.keyword is None]
        if parameter in positional and positional.index(parameter) < len(given):
            return given[positional.index(parameter)], False
        return None, True


_PARTIAL = frozenset({"functools.partial"})


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

    def __init__(self, module: cst.Module, names: ModuleNames, walrus: bool = True,
                 unbound: FrozenSet[str] = frozenset()) -> None:
        self.names = names
        self.walrus = walrus
        self.unbound = unbound  # `ControlFlowGraph`'s: names only other functions bind
        self._module = module
        # short callee -> each call: (inside a loop of its function, the function it is in: None at the top)
        self._call_sites: Optional[Dict[str, List[Tuple[bool, Optional[str]]]]] = None
        self.module_functions: Dict[str, cst.FunctionDef] = {}
        self.methods: Dict[int, Dict[str, cst.FunctionDef]] = {}  # id(class) -> its methods
        self.bases: Dict[int, List[cst.ClassDef]] = {}  # id(class) -> its base classes defined in the file
        self.owner_class: Dict[int, cst.ClassDef] = {}  # id(method) -> its class
        self.nested: Dict[int, Dict[str, cst.FunctionDef]] = {}  # id(function) -> functions defined in it
        self._work: Dict[int, Tuple[Inner, ...]] = {}
        self._flows: Dict[int, FunctionFlow] = {}
        self._remote: Dict[Tuple[int, int], Optional[Remote]] = {}
        self._statements: Dict[int, tuple] = {}
        self._rebound: Dict[Tuple[int, str], bool] = {}
        self._passings: Dict[int, Optional[Tuple[Passing, ...]]] = {}
        self.framework_module: Optional[frameworks.FrameworkModule] = None  # the framework code the file inherits
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
        return self._inherited(class_def, name)

    def _inherited(self, class_def: cst.ClassDef, name: str) -> Optional[cst.FunctionDef]:
        """A method the class inherits from a framework modelled in `training.frameworks` (the Hugging Face
        `Trainer`'s `training_step`), when every base of the class is that framework's class or one of the
        file's (which did not define it): a base of another package may define it, unknown."""
        qualified = [self.names.qualify(base.value) for base in class_def.bases]
        framework = [q for q in qualified if q in frameworks.HF_TRAINERS]
        file_bases = {base.name.value for base in self.bases.get(id(class_def), ())}
        if not framework or any(q not in frameworks.HF_TRAINERS and dotted_name(base.value) not in file_bases
                                for q, base in zip(qualified, class_def.bases)):
            return None
        if self.framework_module is None:
            self.framework_module = frameworks.hf_trainer()
        return self.framework_module.method(name)

    def flow(self, function: cst.FunctionDef) -> FunctionFlow:
        flow = self._flows.get(id(function))
        if flow is None:
            flow = self._flows[id(function)] = FunctionFlow(
                ControlFlowGraph(function, graph.inplace_effects, self.walrus, self.unbound))
        return flow

    def runs(self, function: cst.FunctionDef) -> Tuple[Inner, ...]:
        """The backwards, `.step()` and `.zero_grad()` calls `function` runs on every call, or under a parameter
        it tests."""
        known = self._work.get(id(function))
        if known is not None:
            return known
        self._work[id(function)] = ()  # recursion stops here
        found: List[Inner] = []
        if returns_only_at_end(function):
            flow = None
            for statement, condition in self.run_statements(function):
                for call in calls_in(statement):
                    if _interesting(call, self.names):
                        flow = flow or self.flow(function)
                        node = _node_of(flow, statement)
                        if node is not None:
                            found.append(Inner(call, function, flow, node, statement, condition))
        self._work[id(function)] = tuple(found)
        return self._work[id(function)]

    def inlined(self, call: cst.Call, caller: Optional[cst.FunctionDef]) -> Iterator[Tuple[Inner, Via]]:
        """What a call in a loop runs on every call, with where it is, in the order it runs; two functions deep."""
        for order, (inner, via) in enumerate(self._inlined(call, caller, (), 1)):
            yield inner, dataclasses.replace(via, order=order)

    def _inlined(self, call: cst.Call, caller: Optional[cst.FunctionDef], renames: Tuple[Tuple[str, str], ...],
                 depth: int, elsewhere: Optional[object] = None) -> Iterator[Tuple[Inner, Via]]:
        function = self.callee(call, caller)
        functions, receiver = self, None
        framework = self.framework_module
        if function is not None and framework is not None and depth == 1 \
                and function is framework.method(function.name.value):  # a framework's method the class inherits
            functions, elsewhere = framework.functions, framework
        if function is None and depth == 1:
            remote = self.remote(call, caller)
            if remote is None:
                return
            function, receiver = remote.function, remote.receiver
            if remote.module is not None:
                functions, elsewhere = remote.module.functions, remote.module
        if function is None or function is caller:
            return
        here = _compose(passed_names(call, function, receiver is not None), renames)
        if receiver is not None:
            here += (("self", receiver),)  # `self._scaler` of the object's method is the loop's `scaler._scaler`
        own = {id(inner.call): inner for inner in functions.runs(function)}
        nested = depth < MAX_DEPTH and returns_only_at_end(function)
        if not own and not nested:
            return
        for statement, condition in functions.run_statements(function):
            passed = None
            if condition is not None:
                passed = _condition_at(call, function, condition, depth, receiver is not None)
                if passed is False:
                    continue  # never runs on this call (`update_grad=False`), or unknown in the loop's terms
            for inner_call in calls_in(statement):
                inner = own.get(id(inner_call))
                if inner is not None:
                    yield inner, Via(call, function, inner.flow, inner.node, inner.statement, here, site=inner.call,
                                     bound=receiver is not None, elsewhere=elsewhere, condition=passed if passed is not True else None,
                                     parameter=condition[0] if condition is not None and passed is not True
                                     else None)
                elif nested and condition is None and not _interesting(inner_call, functions.names):
                    for deeper, via in functions._inlined(inner_call, function, here, depth + 1, elsewhere):
                        yield deeper, dataclasses.replace(via, call=call, direct=False)  # at the loop's own call

    def run_statements(self, function: cst.FunctionDef) -> tuple:
        """`_run_statements`, once per function."""
        known = self._statements.get(id(function))
        if known is None:
            known = self._statements[id(function)] = tuple(_run_statements(function, self.rebinds))
        return known

    def rebinds(self, function: cst.FunctionDef, name: str) -> bool:
        """`_rebinds`, once per function and name."""
        key = (id(function), name)
        if key not in self._rebound:
            self._rebound[key] = _rebinds(function, name)
        return self._rebound[key]

    def remote(self, call: cst.Call, caller: Optional[cst.FunctionDef]) -> Optional[Remote]:
        """What a call runs that is not a function of this file (`callee`): a function of another file of the
        project, or a method of an object of a class of the project (see the module's docstring); None when
        the code does not say, or the index says it runs no backward."""
        key = (id(call), id(caller))
        if key not in self._remote:
            self._remote[key] = self._find_remote(call, caller)
        return self._remote[key]

    def _find_remote(self, call: cst.Call, caller: Optional[cst.FunctionDef]) -> Optional[Remote]:
        project = self.names.project
        dotted = dotted_name(call.func)
        if project is None or dotted is None:
            return None
        index = project.index  # looked up once: it is found by the importer's path
        if not index.carriers():
            return None
        imported = self.names.imported(dotted)
        if imported is not None:  # `train_step(...)`, `utils.train_step(...)`: a function of another file
            if imported[1].rsplit(".", 1)[-1] not in index.carrier_functions():
                return None
            located = project.locate(*imported)
            found = project.carrier(*located) if located is not None else None
            return Remote(found[0], found[1]) if found is not None else None
        receiver, method = (dotted, "__call__") if isinstance(call.func, cst.Name) else dotted.rsplit(".", 1)
        if receiver == "self" or method not in index.carrier_methods():
            return None  # a method of the caller's own class (`callee`'s), or no class of the project runs one
        if caller is not None and receiver in parameter_names(caller):
            if caller is not self.module_functions.get(caller.name.value):
                return None
            found = project.handed(caller, receiver, method)  # what the project's calls of `caller` pass
            if found is None or self.rebinds(caller, receiver):
                return None
            return Remote(found[0], found[1], receiver)
        classes = self._classes_of(receiver)
        if len(classes) != 1:
            return None
        where, name = classes.pop()
        if not name:
            return None
        if where is None:  # a class of this file
            if not index.carries(os.path.abspath(str(project.importer)), name, method):
                return None
            function = self.method_of_class(name, method)
            return Remote(None, function, receiver) if function is not None else None
        found = project.carrier(where, name, method)
        return Remote(found[0], found[1], receiver) if found is not None else None

    def run_by(self, call: cst.Call, caller: Optional[cst.FunctionDef]
               ) -> Optional[List[Tuple["Functions", cst.FunctionDef]]]:
        """Every function the code shows `call` may run, with the index of its file: a function of this file
        (`callee`), or the method of that name of each class of the project whose objects the file binds the
        receiver to (`self.model = FlowRL(...)` in one branch, `self.model = Flow(...)` in another: the classes
        that define `reinforce_forward` run it; one without it would raise). None when the receiver may hold
        something else, or no class defines the method. Unlike `remote`, not only functions that backward."""
        function = self.callee(call, caller)
        if function is not None:
            return [(self, function)]
        project = self.names.project
        dotted = dotted_name(call.func)
        if dotted is None or not isinstance(call.func, cst.Attribute):
            return None
        receiver, method = dotted.rsplit(".", 1)
        values = [value for value in self.names.values_of(receiver)
                  if not (isinstance(value, cst.Name) and value.value == "None")]  # `self.model = None` until built
        if project is None:  # a file alone: its own classes only
            constructors = {dotted_name(built.func) if isinstance(built, cst.Call) else None
                            for value in values for built in _constructions(value)}
            classes = {(None, name) for name in constructors
                       if name is not None and len(self.names.classes.get(name, ())) == 1}
            if len(classes) != len(constructors):
                return None
        else:
            classes = self._classes_of(receiver, values) if values else set()
        if not classes or ("", "") in classes:
            return None
        found: List[Tuple[Functions, cst.FunctionDef]] = []
        for where, name in classes:
            if where is None:
                method_function = self.method_of_class(name, method)
                if method_function is not None:
                    found.append((self, method_function))
                continue
            located = _project_class(where, name, project.used)
            if located is None:
                return None
            module, class_name = located
            method_function = module.functions.method_of_class(class_name, method)
            if method_function is not None:
                found.append((module.functions, method_function))
        return found or None

    def _classes_of(self, receiver: str, values: Optional[List[cst.BaseExpression]] = None) -> set:
        """The classes whose objects the file binds `receiver` to (`loss_scaler = NativeScaler()`), as (file,
        class): the file of the project an imported class is in, None for a class of this file, and ("", "")
        for a value that is no object of a class the code shows. Empty when the file does not bind the name."""
        project = self.names.project
        found = set()
        for bound in self.names.values_of(receiver) if values is None else values:
            for value in _constructions(bound):
                found.add(self._class_built(value, project))
        return found

    def _class_built(self, value: cst.BaseExpression, project) -> Tuple[Optional[str], str]:
        """(file, class) of the object `value` builds (`_classes_of`), ("", "") where the code shows none."""
        constructor = dotted_name(value.func) if isinstance(value, cst.Call) else None
        imported = self.names.imported(constructor) if constructor is not None else None
        located = project.locate(*imported) if imported is not None else None
        if located is not None:
            return located
        if constructor is not None and imported is None and len(self.names.classes.get(constructor, ())) == 1:
            return None, constructor
        return "", ""

    def passings(self, function: cst.FunctionDef) -> Optional[Tuple[Passing, ...]]:
        """Every place this file runs the top-level `function`, with the arguments it passes (`Passing`); None when
        the file uses its name in any other way (handed to `mp.spawn`, stored, rebound, called from a lambda):
        what it is called with is then unknown. Calls from other files of the project make it unknown too."""
        name = function.name.value
        if self.module_functions.get(name) is not function:
            return None
        if id(function) not in self._passings:
            found: Optional[List[Passing]] = []
            project = self.names.project
            if project is not None:
                callers = project.index.callers(str(project.importer), name)
                here = os.path.abspath(str(project.importer))
                others = sorted({path for path, _ in callers or () if os.path.abspath(path) != here})
                if others:
                    project.used.update(others)  # the answer rests on them
                    found = None  # another file calls it too, with what this file does not show
            if found is not None and not self._find_passings(self._module, (), None, function, found):
                found = None
            self._passings[id(function)] = tuple(found) if found is not None else None
        return self._passings[id(function)]

    def _find_passings(self, node: cst.CSTNode, ancestors: Tuple[cst.CSTNode, ...], caller: Optional[cst.FunctionDef],
                       function: cst.FunctionDef, found: List[Passing]) -> bool:
        """Collect the `Passing`s of `function` under `node`; False at a use of its name that is none."""
        if isinstance(node, cst.Name) and node.value == function.name.value:
            return self._passing(node, ancestors, caller, function, found)
        if isinstance(node, cst.FunctionDef):
            caller = node
        inner = ancestors + (node,)
        return all(self._find_passings(child, inner, caller, function, found) for child in children(node))

    def _passing(self, name: cst.Name, ancestors: Tuple[cst.CSTNode, ...], caller: Optional[cst.FunctionDef],
                 function: cst.FunctionDef, found: List[Passing]) -> bool:
        parent = ancestors[-1] if ancestors else None
        if parent is function or (isinstance(parent, cst.Attribute) and parent.attr is name) \
                or (isinstance(parent, cst.Arg) and parent.keyword is name):
            return True  # its own `def`, `x.train`, `train=` of a call: not a use of the function
        if any(isinstance(node, cst.Lambda) for node in ancestors):
            return False
        if isinstance(parent, cst.Call) and parent.func is name:
            found.append(Passing(tuple(parent.args), caller))
            return True
        if not isinstance(parent, cst.Arg) or parent.keyword is not None or parent.star or len(ancestors) < 3:
            return False
        handed, called = ancestors[-2], ancestors[-3]
        if not (isinstance(handed, cst.Call) and isinstance(called, cst.Call) and called.func is handed):
            return False  # handed to something that is not called at once (`mp.spawn(train, ...)`)
        if self.names.callee(handed) in _PARTIAL and handed.args and handed.args[0] is parent:
            found.append(Passing(tuple(handed.args[1:]) + tuple(called.args), caller))
            return True
        if len(handed.args) != 1:
            return False
        found.append(Passing(tuple(called.args), caller, keywords_only=True))
        return True

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
        return returned_values(self.flow(function))

    def returns_calls_of(self, function: cst.FunctionDef, callees: FrozenSet[str]) -> bool:
        """Every value `function` returns is a call of one of `callees` (qualified names) made in it: `return
        DDP(model)`, or a name bound only to such a call (`wrapped = DDP(model)` ... `return wrapped`); a function
        that returns nothing, or something else on some path, does not."""
        returns = self.returns(function)
        flow = self.flow(function)
        for value, node in returns:
            values: List[Optional[cst.BaseExpression]] = [value]
            if isinstance(value, cst.Name):
                definitions = flow.reaching(node, value.value)
                values = [definition.value if definition.kind == "assign" and not definition.unpacked else None
                          for definition in definitions] or [None]
            if not all(isinstance(each, cst.Call) and self.names.callee(each) in callees for each in values):
                return False
        return bool(returns)

    def called_in_loop(self, function: cst.FunctionDef) -> Optional[bool]:
        """This file calls `function` from inside a loop (yes), or only outside loops and at the top of the
        module or in functions that run once themselves (no: `main()` under `if __name__ == "__main__":`, and
        `train()` that `main()` calls), or not at all (unknown: another file, or an entry point, may; so too
        when a function that calls it is not called here: `_train_inner_loop` called by `train_epoch`, which
        the runner of another file may call once an epoch)."""
        if self._call_sites is None:
            self._call_sites = {}
            self._index_calls(block_of(self._module), False, None)
        return self._runs_in_loop(function.name.value, frozenset())

    def _runs_in_loop(self, name: str, seen: FrozenSet[str]) -> Optional[bool]:
        sites = self._call_sites.get(name)
        if sites is None or name in seen:
            return None
        if any(in_loop for in_loop, _ in sites):
            return True
        answers = [self._runs_in_loop(caller, seen | {name}) if caller is not None else False for _, caller in sites]
        if any(answers):
            return True
        return None if None in answers else False

    def _index_calls(self, statements: Sequence[cst.CSTNode], in_loop: bool, caller: Optional[str]) -> None:
        for statement in statements:
            if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                for call in calls_in(statement):
                    callee = short_callee(call.func)
                    if callee is not None:
                        self._call_sites.setdefault(callee, []).append((in_loop, caller))
                continue
            if isinstance(statement, cst.Match):
                continue
            inside = in_loop or isinstance(statement, (cst.For, cst.While))
            within = caller
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                inside = False  # a definition runs where it is called
                if isinstance(statement, cst.FunctionDef):
                    within = statement.name.value
            for owner in _blocks_of(statement):
                self._index_calls(block_of(owner), inside, within)

    def has_work(self, call: cst.Call, caller: Optional[cst.FunctionDef]) -> bool:
        """`call` runs a backward of this file's functions, or of another file's, on every call (or under what
        it passes)."""
        return any(roles.classify_backward(inner.call, via.names(self.names)) is not None
                   for inner, via in self.inlined(call, caller))


def _project_class(path: str, name: str, used: set, depth: int = 0) -> Optional[Tuple[object, str]]:
    """The file of the project (`ProjectModule`) that defines the class `name` that `path` binds, following a
    package's `__init__.py` that imports it again (`from .graphflow_rl import FlowRL`); the files read join
    `used`. None where it leads out of the project."""
    from torchlint.project.files import ProjectFiles, load

    module = load(Path(path))
    if module is None or depth > 3:
        return None
    used.add(str(module.path))
    if isinstance(module.definition(name), cst.ClassDef):
        return module, name
    files = ProjectFiles(Path(module.path))
    imported = module.names.imported(name)
    if imported is not None:
        located = files.locate(*imported)
        return _project_class(located[0], located[1], used, depth + 1) if located is not None else None
    for statement in module.module.body:  # `from .graphflow_rl import *`
        for small in getattr(statement, "body", ()) if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.ImportFrom) and isinstance(small.names, cst.ImportStar):
                source = dotted_name(small.module) if small.module is not None else None
                located = files.locate(len(small.relative), f"{source}.{name}") if source else None
                found = _project_class(located[0], name, used, depth + 1) if located is not None else None
                if found is not None:
                    return found
    return None


def _blocks_of(statement: cst.CSTNode) -> List[cst.CSTNode]:
    """The owners of the blocks of an `if` (its `elif`s and `else`), `try` or `with`."""
    if isinstance(statement, cst.If):
        return [statement] + (_blocks_of(statement.orelse) if isinstance(statement.orelse, cst.If)
                              else [statement.orelse] if statement.orelse is not None else [])
    if isinstance(statement, cst.Try):
        return [statement, *statement.handlers] + [part for part in (statement.orelse, statement.finalbody) if part]
    return [statement]


def _interesting(call: cst.Call, names: ModuleNames) -> bool:
    """A backward (not `autograd.grad`, which only returns gradients), a `.step()`, or a `.zero_grad()` (read
    for a function of another file, and for one that a helper of this file calls in turn: the resets in the
    body of the helper the loop calls are `roles.helpers`')."""
    backward = roles.classify_backward(call, names)
    if backward is not None:
        return backward[0] != "grad"
    func = call.func
    return isinstance(func, cst.Attribute) and func.attr.value in ("step", "zero_grad")


def _run_statements(function: cst.FunctionDef, rebinds=None
                    ) -> Iterator[Tuple[cst.CSTNode, Optional[Tuple[str, bool]]]]:
    """The simple statement lines a function runs on every call (with no condition), and those of an `if`
    among them that tests a parameter it never rebinds, `if update_grad:` / `if not update_grad:` (with the
    parameter, and whether they run where it is true), in source order."""
    parameters = set(parameter_names(function)) - {"self"}
    for statement in _every_call_blocks(block_of(function)):
        if not isinstance(statement, cst.If):
            yield statement, None
            continue
        tested = _tested_parameter(statement.test, parameters)
        if tested is None or (rebinds or _rebinds)(function, tested[0]):
            continue
        name, holds = tested
        for inner in _every_call_statements(block_of(statement)):
            yield inner, (name, holds)
        if isinstance(statement.orelse, cst.Else):
            for inner in _every_call_statements(block_of(statement.orelse)):
                yield inner, (name, not holds)


def _tested_parameter(test: cst.BaseExpression, parameters: set) -> Optional[Tuple[str, bool]]:
    """`update_grad` -> (`update_grad`, True); `not update_grad` -> (`update_grad`, False)."""
    if isinstance(test, cst.Name) and test.value in parameters:
        return test.value, True
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _tested_parameter(test.expression, parameters)
        return (inner[0], not inner[1]) if inner is not None else None
    return None


def _every_call_blocks(statements: Sequence[cst.CSTNode]) -> Iterator[cst.CSTNode]:
    """`_every_call_statements`, with the `if` statements met at that level as they are."""
    for statement in statements:
        if isinstance(statement, cst.If):
            yield statement
        elif isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            yield statement
        elif isinstance(statement, cst.With):
            yield from _every_call_blocks(block_of(statement))
        elif isinstance(statement, (cst.Try, cst.TryStar)):
            yield from _every_call_blocks(block_of(statement))
            if statement.finalbody is not None:
                yield from _every_call_blocks(block_of(statement.finalbody))


def _rebinds(function: cst.FunctionDef, name: str) -> bool:
    """The function (not a function nested in it) assigns `name` somewhere."""
    for part in preorder(function.body):
        targets: List[cst.BaseExpression] = []
        if isinstance(part, cst.Assign):
            targets = [target.target for target in part.targets]
        elif isinstance(part, (cst.AugAssign, cst.AnnAssign)):
            targets = [part.target]
        elif isinstance(part, (cst.For, cst.CompFor)):
            targets = [part.target]
        elif isinstance(part, cst.NamedExpr):
            targets = [part.target]
        elif isinstance(part, cst.AsName):
            targets = [part.name]
        elif isinstance(part, cst.Del):
            targets = [part.target]
        for target in targets:
            if any(isinstance(node, cst.Name) and node.value == name for node in preorder(target)):
                return True
    return False


def argument_for(call: cst.Call, function: cst.FunctionDef, parameter: str,
                 bound: Optional[bool] = None) -> Optional[cst.BaseExpression]:
    """What `call` passes for `function`'s `parameter` (by keyword, or by position; `bound`: the call runs a
    method of an object, whose `self` it does not pass; by default, a call of an attribute); None when it does
    not pass it, or passes it through `*args`/`**kwargs`."""
    value = keyword(call, parameter)
    if value is not None:
        return value
    positional = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    if bound is None:
        bound = isinstance(call.func, cst.Attribute)
    if bound and positional and positional[0] == "self":
        positional = positional[1:]
    if parameter not in positional:
        return None
    index = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            if index == positional.index(parameter):
                return arg.value
            index += 1
    return None


def default_of(function: cst.FunctionDef, parameter: str) -> Optional[cst.BaseExpression]:
    params = function.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value == parameter:
            return param.default
    return None


def _condition_at(call: cst.Call, function: cst.FunctionDef, condition: Tuple[str, bool], depth: int,
                  bound: bool):
    """Whether a statement under `if <parameter>:` runs on this call: True (always: `update_grad=True`, or the
    default `True` when nothing is passed), False (never, or not known in the loop's terms: a call deeper than
    the loop's own passing a name), or the (expression, holds) of the loop's call it runs under."""
    parameter, holds = condition
    passed = argument_for(call, function, parameter, bound)
    if passed is None and (any(arg.star for arg in call.args)):
        return False
    value = passed if passed is not None else default_of(function, parameter)
    if value is None:
        return False
    truth = literal_truth(value)
    if truth is not None:
        return truth == holds
    if passed is None or depth > 1:
        return False
    return passed, holds


def literal_truth(value: cst.BaseExpression) -> Optional[bool]:
    """The truth of a literal: `True`/`False`/`None`, a number (`1`, `-1`, `0.0`); None for anything else."""
    if isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
        return value.value == "True"
    if isinstance(value, cst.Float):
        return float(value.evaluated_value) != 0
    number = int_value(value)
    return bool(number) if number is not None else None


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


def returns_only_at_end(function: cst.FunctionDef) -> bool:
    """No `return` (nor `yield`) but, maybe, the last statement of the body: every call runs the whole body."""
    body = list(block_of(function))
    last = body[-1] if body else None
    for part in preorder(function.body):
        kind = type(part)
        if kind in _SCOPES and part is not function:
            continue
        if kind is cst.Yield or kind is cst.Await:
            return False
        if kind is cst.Return:
            if not (isinstance(last, cst.SimpleStatementLine) and part in last.body):
                return False
    return True


_SCOPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


def _node_of(flow: FunctionFlow, statement: cst.CSTNode) -> Optional[int]:
    for node in flow.graph.nodes:
        if node.line is statement or node.syntax is statement:
            return node.index
    return None


def parameter_names(function: cst.FunctionDef) -> List[str]:
    parameters = function.params
    every = [*parameters.posonly_params, *parameters.params, *parameters.kwonly_params]
    return [parameter.name.value for parameter in every]


def passed_names(call: cst.Call, function: cst.FunctionDef, bound: bool = False) -> Tuple[Tuple[str, str], ...]:
    """The callee's parameters bound to names of the caller: `train_step(net, opt)` -> (model, net), (optimizer, opt).
    `bound`: the call runs a method of an object (`scaler(loss, opt)` its `__call__`), whose `self` it does not pass."""
    positional = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    if positional and positional[0] == "self" and (bound or isinstance(call.func, cst.Attribute)):
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


def returned_values(flow: FunctionFlow) -> List[Tuple[cst.BaseExpression, int]]:
    """Each value a function returns, with the node of its `return` in `flow`, the function's graph."""
    return [(node.syntax.value, node.index) for node in flow.graph.nodes
            if isinstance(node.syntax, cst.Return) and node.syntax.value is not None]


def _constructions(value: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """What `value` may be built by: the construction behind the moves a module's methods make in place and hand
    back (`Net(d).to(device)`, `Net(d).cuda().train()`: an object of `Net` all the same), on each side of a
    conditional expression (`Net(d).cuda() if cuda else Net(d)`)."""
    if isinstance(value, cst.IfExp):
        yield from _constructions(value.body)
        yield from _constructions(value.orelse)
        return
    yield unmoved(value)
