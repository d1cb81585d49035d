"""Which model a loop runs is a `DistributedDataParallel` one, and where it was wrapped.

`model = DDP(model, device_ids=[rank])` may sit in the loop's function, before the loop, under
`if args.distributed:`; or in the function's callers, in this file or another of the project, which hand the
wrapped model to `train_one_epoch(model, ...)`. The name the loop calls is followed through the definitions
that reach the call (copies, `model = model.to(device)`), and a parameter through every call of its function
in the project (`ProjectFiles.wrapped_by_callers`). Yes, no, or unknown (None): a parameter some call passes
something else for, or whose function is handed on as a value, is unknown.

The wrap may be a call of a factory of the project, in this file or another (`model = smart_DDP(model)` with
`def smart_DDP(model): return DDP(model, ...)` in `utils/torch_utils.py`): a function whose every `return` hands
back a DDP wrap made in it.

A wrap that waits for a condition (`if args.distributed:`) counts: the model is a DDP one whenever the user
turns the option on, and the answer carries the condition so that a finding says "when ...". The module a
DDP wraps (`model.module`) is not one; nor is a model wrapped by FSDP or any other wrapper.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, List, Optional, Tuple, Union

import libcst as cst

from torchlint.flow.cfg import Definition
from torchlint.names import ModuleNames, dotted_name
from torchlint.wrappers import SAME_MODULE_METHODS

if TYPE_CHECKING:
    from torchlint.flow.dataflow import FunctionFlow
    from torchlint.training.loop import TrainingLoop
    from torchlint.training.sites import Site

DDP = frozenset({"torch.nn.parallel.DistributedDataParallel",
                 "torch.nn.parallel.distributed.DistributedDataParallel"})
_DEPTH = 4
_EMPTY = cst.Module(body=[])


@dataclass(frozen=True)
class DdpWrap:
    """Where the model a loop runs was wrapped in `DistributedDataParallel`."""

    line: Optional[int] = None  # the wrap's line in the caller's file (`wrapped_by_callers`)
    node: Optional[cst.CSTNode] = None  # the wrap, in the loop's own function
    scope: str = ""  # the function that wraps (`train_worker`), "" at module level or unknown
    path: Optional[str] = None  # another file of the project; None for the loop's file
    condition: Optional[str] = None  # the test the wrap waits for, as written; None: on every path
    factory: Optional[str] = None  # the function of the project that wraps (`smart_DDP`); None: `DDP(...)` itself


_PLAIN = "plain"  # a value that is no DDP model (a module built, a copy of one)
Answer = Union[DdpWrap, str, None]


def ddp_wrap(loop: "TrainingLoop", name: str, where: "Site", names: ModuleNames) -> Optional[DdpWrap]:
    """Where `name` (called at `where`, a site of `loop`) was wrapped in DDP; None when it is no DDP model or
    the code does not show that it is one. `model.forward` stands for `model`."""
    if name.endswith(".forward"):
        name = name[: -len(".forward")]
    if "." in name:  # `self.model`: the file's bindings of the attribute
        return DdpWrap() if _bound_ddp(loop, name, names, 0) else None
    definitions = _definitions_at(loop, name, where)
    if not definitions and loop.function is not None:
        binds, enclosed = _from_enclosing(loop, name, names)
        if binds:
            return enclosed if isinstance(enclosed, DdpWrap) else None
        # a global the function reads: the file's bindings of it
        return DdpWrap() if _bound_ddp(loop, name, names, 0) else None
    answer = _combined([_of_definition(loop, definition, names, 0) for definition in definitions])
    return answer if isinstance(answer, DdpWrap) else None


def _from_enclosing(loop: "TrainingLoop", name: str, names: ModuleNames) -> Tuple[bool, Answer]:
    """A name the loop's function reads from the function it is nested in (Ignite's `def update(engine, batch)`
    inside `train()`): whether that function binds it, and what the definitions of it there that reach the
    nested `def` say, with the tests they wait for."""
    functions = getattr(loop, "functions", None)
    enclosing = _enclosing_function(functions, loop.function) if functions is not None else None
    if enclosing is None:
        return False, None
    outer = functions.flow(enclosing)
    node = next((node for node in outer.graph.nodes if node.syntax is loop.function), None)
    definitions = outer.reaching(node.index, name) if node is not None else []
    if not definitions:
        return False, None
    return True, _combined([_of_definition(loop, definition, names, 0, outer, enclosing.name.value)
                            for definition in definitions])


def _enclosing_function(functions, function: cst.FunctionDef) -> Optional[cst.FunctionDef]:
    """The function of the file that `function` is defined in, if any."""
    candidates = [*functions.module_functions.values(),
                  *(method for methods in functions.methods.values() for method in methods.values()),
                  *(nested for inner in functions.nested.values() for nested in inner.values())]
    return next((candidate for candidate in candidates
                 if any(nested is function for nested in functions.nested.get(id(candidate), {}).values())), None)


def _definitions_at(loop: "TrainingLoop", name: str, where: "Site") -> List[Definition]:
    """The definitions of `name` that give its value at `where`: made in the iteration, or before the loop."""
    found = []
    for definition in loop.reaching(name, where):
        if definition.kind == "start":
            found += loop.flow.entering(loop.iteration.region, name)
        else:
            found.append(definition)
    return found


def _of_definition(loop: "TrainingLoop", definition: Definition, names: ModuleNames, depth: int,
                   outer: Optional["FunctionFlow"] = None, outer_name: str = "") -> Answer:
    """What `definition` binds; `outer`: the flow of the function the loop's function is nested in, when the
    definition is one of its (the wrap's scope and condition are then that function's)."""
    if depth > _DEPTH:
        return None
    flow = outer if outer is not None else loop.flow
    if definition.kind == "parameter":
        return _from_callers(loop, definition.name) if outer is None else None
    if definition.kind != "assign" or definition.unpacked or definition.value is None:
        return None
    value = definition.value
    inner = None
    scope = outer_name if outer is not None else loop.function.name.value if loop.function else ""
    if isinstance(value, cst.Call):
        if _is_ddp(value, names):
            return DdpWrap(scope=scope, condition=_condition(flow, definition.node), node=value)
        func = value.func
        if isinstance(func, cst.Attribute) and func.attr.value in SAME_MODULE_METHODS:
            inner = dotted_name(func.value)  # `model = model.to(device)`: the same object
        if inner is None:
            factory = _ddp_factory(loop, value)
            if factory is not None:
                return DdpWrap(scope=scope, condition=_condition(flow, definition.node), node=value, factory=factory)
            return _PLAIN
    elif isinstance(value, cst.Name):
        inner = value.value
    if inner is None or "." in inner:
        return None
    earlier = flow.reaching(definition.node, inner)
    return _combined([_of_definition(loop, other, names, depth + 1, outer, outer_name) for other in earlier])


def _is_ddp(call: cst.Call, names: ModuleNames) -> bool:
    """`call` builds a DDP wrap: `DDP(...)` by the file's imports, or by a file of the project that imports it
    again (`from utils.dist import DistributedDataParallel`)."""
    if names.callee(call) in DDP:
        return True
    dotted = dotted_name(call.func)
    imported = names.imported(dotted) if dotted is not None and names.project is not None else None
    return imported is not None and names.project.reexported(*imported) in DDP


def _ddp_factory(loop: "TrainingLoop", call: cst.Call) -> Optional[str]:
    """The name of the function of the project that `call` runs when every value it returns is a DDP wrap made
    in it; None otherwise (a factory that hands back the model unwrapped on some path wraps only under a test of
    its own, which the loop cannot name)."""
    found = loop.called_function(call)
    if found is None:
        return None
    function, functions = found
    return function.name.value if functions.returns_calls_of(function, DDP) else None


def _combined(answers: List[Answer]) -> Answer:
    """A DDP wrap on some paths and other values on the rest: the wrap, under its condition (the code that
    wraps decides when; an unknown value on another path does not change that it is DDP then)."""
    wraps = [answer for answer in answers if isinstance(answer, DdpWrap)]
    if not wraps:
        return _PLAIN if answers and all(answer == _PLAIN for answer in answers) else None
    if len(wraps) == len(answers):
        unconditional = [wrap for wrap in wraps if wrap.condition is None]
        return (unconditional or wraps)[0]
    conditional = [wrap for wrap in wraps if wrap.condition is not None]
    return conditional[0] if conditional else None  # wrapped on some paths, and no test says which


def _from_callers(loop: "TrainingLoop", parameter: str) -> Answer:
    """A parameter of a top-level function: what every call of it in the project passes."""
    names = loop.names
    function = loop.function
    project = names.project if names is not None else None
    if project is None or function is None or loop.class_def is not None \
            or loop.functions is None or loop.functions.module_functions.get(function.name.value) is not function:
        return None
    found = project.wrapped_by_callers(function, parameter, DDP, _count_parameter(loop))
    if found is None:
        return None
    own = os.path.abspath(str(project.importer)) == os.path.abspath(found.path)
    return DdpWrap(line=found.line, scope=found.scope, path=None if own else found.path, condition=found.condition)


def _count_parameter(loop: "TrainingLoop") -> Optional[str]:
    """The parameter that counts the loop's accumulation window (`accum_iter` of `(i + 1) % accum_iter`)."""
    count = None
    window = loop.inner_window
    if window is not None and window.count.kind == "counted":
        count = window.count.count
    else:
        for step in loop.optimizer_steps:
            check = loop.accumulation_check(step) if step.depth == 0 else None
            if check is not None:
                count = check.count
                break
    return count.value if isinstance(count, cst.Name) else None


def _condition(flow: "FunctionFlow", node: int) -> Optional[str]:
    """The `if` tests whose branches hold the control-flow node `node`, as written, joined by `and`."""
    nodes = flow.graph.nodes
    inside = nodes[node].branches
    tests = []
    for statement_id, holds in inside:
        for other in nodes:
            assume = other.assume
            if assume is not None and isinstance(assume.statement, cst.If) and id(assume.statement) == statement_id \
                    and assume.holds == holds:
                test = _EMPTY.code_for_node(assume.test)
                tests.append(test if holds else f"not ({test})")
                break
    return " and ".join(tests) or None


def _bound_ddp(loop: "TrainingLoop", name: str, names: ModuleNames, depth: int) -> bool:
    """`name` holds a DDP model by the file's bindings of it: bound to `DDP(...)` or to a call of a DDP factory of
    the project, or a copy of a name that is (`self.model = model`, `model = model.to(device)`); not the module a
    DDP wraps."""
    if depth > 3:
        return False
    for value in names.values_of(name):
        if isinstance(value, cst.Call):
            if _is_ddp(value, names) or _ddp_factory(loop, value) is not None:
                return True
            func = value.func
            if isinstance(func, cst.Attribute) and func.attr.value in SAME_MODULE_METHODS:
                inner = dotted_name(func.value)
                if inner is not None and inner != name and _bound_ddp(loop, inner, names, depth + 1):
                    return True
        elif isinstance(value, (cst.Name, cst.Attribute)):
            inner = dotted_name(value)
            if inner is not None and inner != name and _bound_ddp(loop, inner, names, depth + 1):
                return True
    return False
