"""Numbers a function's locals are fixed to by the code that runs it.

A count may be computed rather than written down: `batch_size = int(config["batch_size"])`, then
`accum = 1` and, only `if batch_size > MAX_BATCH:`, `accum = batch_size // MAX_BATCH`, where the one
call of the function passes `config = {"batch_size": 16, ...}` and `MAX_BATCH = 16`. Every value the
name may hold is then known: here only 1. `fixed_numbers` answers with every number a local may stand
for (through `int()`, `+ - * //`, `max`/`min`), or None when any assignment, argument or key is not a
number the file spells out.

It reads every assignment of the name in its function, whatever the path (a superset of those that
reach a given point, so a branch never taken only adds values); a dict parameter is read where the
function is called, and only when nothing may change it before the read: in the function, it is only
read by key until the statement that reads it; in the caller, it is bound once to a dict literal and
used only to be passed.
"""

from __future__ import annotations

import itertools
from typing import FrozenSet, List, Optional, Sequence, Set

import libcst as cst

from torchlint.names import ModuleNames, dotted_name, int_value
from torchlint.training.calls import Functions, Passing, parameter_names
from torchlint.walk import preorder

_MAX_DEPTH = 8


def fixed_numbers(value: cst.BaseExpression, function: cst.FunctionDef, names: ModuleNames,
                  functions: Functions, depth: int = 0) -> Optional[FrozenSet[int]]:
    """Every number `value`, read in `function`, may stand for; None when any is unknown."""
    if depth > _MAX_DEPTH:
        return None
    number = int_value(value)
    if number is not None:
        return frozenset({number})
    if isinstance(value, cst.Call) and dotted_name(value.func) == "int" and len(value.args) == 1 \
            and not value.args[0].star and value.args[0].keyword is None:
        return fixed_numbers(value.args[0].value, function, names, functions, depth + 1)
    if isinstance(value, cst.Call) and dotted_name(value.func) in ("max", "min") and len(value.args) >= 2 \
            and not any(arg.star or arg.keyword is not None for arg in value.args):
        return _extreme(value, function, names, functions, depth)
    if isinstance(value, cst.BinaryOperation):
        return _arithmetic(value, function, names, functions, depth)
    if isinstance(value, cst.Name):
        return _name_numbers(value.value, function, names, functions, depth)
    if isinstance(value, cst.Subscript):
        return _key_numbers(value, function, names, functions, depth)
    return None


def _arithmetic(value: cst.BinaryOperation, function: cst.FunctionDef, names: ModuleNames, functions: Functions,
                depth: int) -> Optional[FrozenSet[int]]:
    left = fixed_numbers(value.left, function, names, functions, depth + 1)
    right = fixed_numbers(value.right, function, names, functions, depth + 1)
    if left is None or right is None:
        return None
    found: Set[int] = set()
    for a in left:
        for b in right:
            if isinstance(value.operator, cst.Add):
                found.add(a + b)
            elif isinstance(value.operator, cst.Subtract):
                found.add(a - b)
            elif isinstance(value.operator, cst.Multiply):
                found.add(a * b)
            elif isinstance(value.operator, cst.FloorDivide) and b != 0:
                found.add(a // b)
            else:
                return None
    return frozenset(found)


def _extreme(value: cst.Call, function: cst.FunctionDef, names: ModuleNames, functions: Functions,
             depth: int) -> Optional[FrozenSet[int]]:
    """`max(1, bs // MAX_BS)`: each choice of the arguments' values, its largest (or smallest)."""
    choices: List[FrozenSet[int]] = []
    for arg in value.args:
        numbers = fixed_numbers(arg.value, function, names, functions, depth + 1)
        if numbers is None:
            return None
        choices.append(numbers)
    pick = max if dotted_name(value.func) == "max" else min
    return frozenset(pick(combination) for combination in itertools.product(*choices))


def _name_numbers(name: str, function: cst.FunctionDef, names: ModuleNames, functions: Functions,
                  depth: int) -> Optional[FrozenSet[int]]:
    """Every value the function's assignments give `name`; a module constant where it assigns none."""
    if name in parameter_names(function):
        return None  # what the callers pass: `TrainingLoop.parameter_values`
    definitions = [d for d in functions.flow(function).graph.definitions if d.name == name]
    if not definitions:
        if _declared_global(function, name):
            return None
        bound = names.values_of(name)
        number = int_value(bound[0]) if len(bound) == 1 else None
        return frozenset({number}) if number is not None else None
    found: Set[int] = set()
    for definition in definitions:
        if definition.kind != "assign" or definition.unpacked or definition.value is None:
            return None
        numbers = fixed_numbers(definition.value, function, names, functions, depth + 1)
        if numbers is None:
            return None
        found |= numbers
    return frozenset(found)


def _key_numbers(read: cst.Subscript, function: cst.FunctionDef, names: ModuleNames, functions: Functions,
                 depth: int) -> Optional[FrozenSet[int]]:
    """`config["batch_size"]` for a parameter `config`: the number each call passes under that key."""
    key = _string_key(read)
    if key is None or not isinstance(read.value, cst.Name) or read.value.value not in parameter_names(function):
        return None
    parameter = read.value.value
    if not _only_read_before(function, parameter, read):
        return None
    passings = functions.passings(function)
    if not passings:
        return None
    found: Set[int] = set()
    for passing in passings:
        passed, defaulted = passing.argument(function, parameter)
        if passed is None or defaulted:
            return None
        literal = passed if isinstance(passed, cst.Dict) else _dict_bound_once(passed, passing.caller, passings,
                                                                                functions)
        entry = _entry(literal, key) if literal is not None else None
        numbers = _number_in(entry, passing.caller, names, functions, depth) if entry is not None else None
        if numbers is None:
            return None
        found |= numbers
    return frozenset(found)


def _number_in(value: cst.BaseExpression, caller: Optional[cst.FunctionDef], names: ModuleNames, functions: Functions,
               depth: int) -> Optional[FrozenSet[int]]:
    if caller is not None:
        return fixed_numbers(value, caller, names, functions, depth + 1)
    number = int_value(value)
    return frozenset({number}) if number is not None else None


def _string_key(read: cst.Subscript) -> Optional[str]:
    if len(read.slice) != 1 or not isinstance(read.slice[0].slice, cst.Index):
        return None
    key = read.slice[0].slice.value
    return key.evaluated_value if isinstance(key, cst.SimpleString) else None


def _entry(literal: cst.Dict, key: str) -> Optional[cst.BaseExpression]:
    found: Optional[cst.BaseExpression] = None
    for element in literal.elements:
        if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
            return None  # `**other`, or a computed key: it may hold `key` too
        if element.key.evaluated_value == key:
            found = element.value
    return found


def _dict_bound_once(passed: cst.BaseExpression, caller: Optional[cst.FunctionDef],
                     passings: Sequence[Passing], functions: Functions) -> Optional[cst.Dict]:
    """The dict literal a caller's local holds when it only binds it once and only passes it to the
    function (`passings`), once, outside any loop."""
    if caller is None or not isinstance(passed, cst.Name) or passed.value in parameter_names(caller):
        return None
    definitions = [d for d in functions.flow(caller).graph.definitions if d.name == passed.value]
    if len(definitions) != 1 or definitions[0].kind != "assign" or definitions[0].unpacked \
            or not isinstance(definitions[0].value, cst.Dict):
        return None
    passed_on = {id(arg) for passing in passings for arg in passing.arguments}
    passes = []
    for parent, child in _uses(caller.body, passed.value):
        if isinstance(parent, cst.Arg) and id(parent) in passed_on:
            passes.append(parent)
        elif not isinstance(parent, cst.AssignTarget):
            return None  # read or changed some other way (`config.update(...)`, `config["k"] = v`)
    loops = [node for node in preorder(caller.body) if isinstance(node, (cst.For, cst.While))]
    if len(passes) != 1 or any(part is passes[0] for loop in loops for part in preorder(loop)):
        return None  # the same dict handed over again: the function may have changed it the first time
    return definitions[0].value


def _only_read_before(function: cst.FunctionDef, parameter: str, read: cst.Subscript) -> bool:
    """In `function`, `parameter` is only read by key (`config["lr"]`) up to and in the top-level statement
    that holds `read`: what comes after cannot change the value `read` gives (in this call; the dict is
    handed over once, `_dict_bound_once`)."""
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    holding = next((i for i, statement in enumerate(body) if any(n is read for n in preorder(statement))), None)
    if holding is None:
        return False
    for index, statement in enumerate(body[:holding + 1]):
        for parent, child in _uses(statement, parameter):
            stored = isinstance(parent, cst.Subscript) and parent.value is child and _is_key_read(statement, parent)
            if not stored:
                return False
    return True


def _is_key_read(statement: cst.CSTNode, subscript: cst.Subscript) -> bool:
    """`subscript` is read, not assigned or deleted (`config["k"] = v`, `del config["k"]`)."""
    for node in preorder(statement):
        targets: List[cst.CSTNode] = []
        if isinstance(node, cst.AssignTarget):
            targets = [node.target]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, cst.Del):
            targets = [node.target]
        for target in targets:
            if any(part is subscript for part in preorder(target)):
                return False
    return True


def _uses(root: cst.CSTNode, name: str):
    """(parent, `name`) for each occurrence of the name under `root`, nested functions included (a closure
    may change it too)."""
    stack = [root]
    while stack:
        node = stack.pop()
        for child in node.children:
            if isinstance(child, cst.Name) and child.value == name:
                yield node, child
            stack.append(child)


def _declared_global(function: cst.FunctionDef, name: str) -> bool:
    return any(isinstance(node, (cst.Global, cst.Nonlocal)) and any(n.name.value == name for n in node.names)
               for node in preorder(function))
