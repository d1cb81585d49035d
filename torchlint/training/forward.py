"""The `forward` a model call runs, and what it returns on the paths that call takes.

`loss = model(input_ids, mask, labels)` in a loop runs the `forward` of the class `model` was built from:
`Ner.from_pretrained(path)` of a class of the file, `BertForNer(config)` of a class imported from another
file of the project, or `model_class.from_pretrained(path)` where `model_class` comes out of a table of
classes (`MODEL_CLASSES[args.model_type]`, every class the table holds). Every binding of the name in the
file must lead to such a class (copies and wrappings, `DataParallel(model)`, `model.to(device)`,
`model, opt = amp.initialize(model, opt)`, `Model(...).cuda()`, lead back to the name's other bindings); one
that does not, or a class whose `forward` is not in the project (a library's model), leaves the call unknown.

A `forward` that returns its loss only when given labels (`if labels is not None: ... return loss`,
`else: return logits`) is read on the paths the call takes: a parameter the call passes a value other than
`None` for (and that the function never assigns) is not `None`, so the branches that test it for `None`
are not taken, and the values assigned there do not reach a `return`. A dict the call spreads
(`model(**inputs)`, `inputs = {"input_ids": ..., "labels": batch[3]}`) passes the keys every display of it
holds and the function does not write again (`spread_keywords`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, List, Mapping, Optional, Tuple

import libcst as cst

from torchlint.flow.dataflow import PrunedFlow
from torchlint.flow.scopes import parameter_names as _parameters
from torchlint.names import Binding, ModuleNames, dotted_name, slot_of, string_value, wrapped_name
from torchlint.text import one_line
from torchlint.walk import preorder
from torchlint.wrappers import LOADERS

if TYPE_CHECKING:
    from torchlint.flow import FunctionFlow
    from torchlint.training.calls import Functions

_DEPTH = 6
# `nn.Module` methods that return the module itself.
_MOVES = frozenset({"to", "cuda", "cpu", "train", "float", "half", "double", "bfloat16", "requires_grad_"})
_DICT_CHANGES = frozenset({"pop", "popitem", "update", "clear", "setdefault"})
_CODE = cst.Module(body=[])


@dataclass(frozen=True)
class Forward:
    """The `forward` of one class a model call may run, read on the paths the call takes: the questions a
    loop answers about its body (`reaching`, `names`, `functions`, `flow`), asked of that function."""

    function: cst.FunctionDef
    class_name: str
    functions: "Functions"
    names: ModuleNames
    flow: "FunctionFlow"
    paths: PrunedFlow
    path: Optional[str] = None  # another file of the project; None for the loop's file
    iteration = None  # no loop: a name keeps no value from one micro-batch to the next

    def reaching(self, name: str, at: int):
        return self.paths.reaching(at, name)

    def returns(self) -> List[Tuple[cst.BaseExpression, int]]:
        """The values the function returns on the paths the call takes."""
        return [(value, node) for value, node in self.functions.returns(self.function) if node in self.paths.reachable]

    def code(self, node: cst.CSTNode) -> str:
        return _CODE.code_for_node(node)

    def quote(self, node: cst.CSTNode) -> str:
        return one_line(self.code(node))

    @property
    def where(self) -> str:
        name = f"`{self.class_name}.forward`"
        return f"{name} ({os_path_name(self.path)})" if self.path else name


def os_path_name(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def model_forwards(call: cst.Call, names: ModuleNames, functions: Optional["Functions"],
                   where: Optional[cst.FunctionDef] = None,
                   spread: Optional[Mapping[str, cst.BaseExpression]] = None,
                   at: Optional[int] = None) -> Optional[List[Forward]]:
    """The `forward` of every class the object `call` (made in function `where`) calls may be built from, each
    read on the paths `call` takes; None when one of them is unknown. The object is what the file binds to its
    name; for a parameter of `where`, what every call of `where` in the file passes when that is the very name
    (`train(args, loader, model)`), else the objects of the project's classes every call of `where` in the
    project passes (`train_one_epoch(model, ...)` in `main.py`). `spread`: what the call's `**inputs` surely
    passes (`spread_keywords`). `at`: the control-flow node of `where` that makes the call, if known: a name
    `where` binds is then what reaches it there (`reaching_classes`), not every binding of the file."""
    name = dotted_name(call.func)
    if name is None or functions is None or names.callee(call) is not None:
        return None
    if where is not None and name in _parameters(where.params) and not passed_as_itself(where, name, functions):
        return _handed_forwards(names, where, name, call, spread or {})
    flow = functions.flow(where) if where is not None and at is not None else None
    if flow is not None and at < len(flow.graph.nodes) and _makes(flow.graph.nodes[at].syntax, call):
        classes = reaching_classes(functions, where, at, name, names)
    else:
        classes = built_classes(names, name, 0, set())
    if not classes:
        return None
    forwards = []
    for found in {id(c): c for c in classes}.values():
        forward = _forward_of(found, names, functions, call, spread or {})
        if forward is None:
            return None
        forwards += [f for f in forward if all(f.function is not known.function for known in forwards)]
    return forwards


def _makes(statement: Optional[cst.CSTNode], call: cst.Call) -> bool:
    """`call` is part of `statement` (a control-flow node's syntax)."""
    return statement is not None and any(node is call for node in preorder(statement))


def _handed_forwards(names: ModuleNames, where: cst.FunctionDef, parameter: str, call: cst.Call,
                     spread: Mapping[str, cst.BaseExpression]) -> Optional[List[Forward]]:
    """The `forward` of each class of the project whose objects every caller of `where` hands it as `parameter`
    (`ProjectFiles.handed_classes`: `main.py` builds the model and calls `train_one_epoch(model, ...)`)."""
    from pathlib import Path

    from torchlint.project.files import load

    project = names.project
    handed = project.handed_classes(where, parameter) if project is not None else None
    if not handed:
        return None
    forwards = []
    for path, class_name in handed:
        module = load(Path(path))
        method = module.functions.method_of_class(class_name, "forward") if module is not None else None
        if method is None:
            return None  # inherited, or not a module: not followed
        project.used.add(str(module.path))
        forwards.append(_read(method, class_name, module.functions, module.names, call, spread, str(module.path)))
    return forwards


def spread_keywords(call: cst.Call, scope, at: int) -> Dict[str, cst.BaseExpression]:
    """What `call`'s `**inputs` surely passes, by keyword: the entries with a string key that every dict
    display reaching `at` in `scope` (a loop, or a `Forward`: `reaching`, `flow`) holds, or every dict a function
    of the file returns (`inputs = self._get_inputs_dict(batch)`), unless the function writes that key again
    (`inputs["labels"] = None`) or changes the dict otherwise (`del`, `.pop`, `.update`). Empty when there is no
    `**` or its dict is not shown."""
    spread = [arg.value for arg in call.args if arg.star == "**"]
    name = dotted_name(spread[0]) if len(spread) == 1 else None
    if name is None:
        return {}
    definitions = scope.reaching(name, at)
    if not definitions:
        return {}
    common: Optional[Dict[str, cst.BaseExpression]] = None
    for definition in definitions:
        value = definition.value
        if definition.kind != "assign" or definition.unpacked:
            return {}
        if isinstance(value, cst.Call):  # `inputs = self._get_inputs_dict(batch)`: the dicts a helper returns
            entries = _returned_entries(value, scope)
        else:
            entries = _display_entries(value)
        if entries is None:
            return {}
        common = entries if common is None else {k: v for k, v in common.items() if k in entries}
    written = _rewritten_keys(scope.flow.graph.owner, name)
    if written is None:
        return {}
    return {key: value for key, value in (common or {}).items() if key not in written}


def _display_entries(value: Optional[cst.BaseExpression]) -> Optional[Dict[str, cst.BaseExpression]]:
    """The string-keyed entries of a dict display; None for anything else."""
    if not isinstance(value, cst.Dict):
        return None
    entries = {}
    for element in value.elements:
        key = string_value(element.key) if isinstance(element, cst.DictElement) else None
        if key is not None:
            entries[key] = element.value
    return entries


def _returned_entries(call: cst.Call, scope) -> Optional[Dict[str, cst.BaseExpression]]:
    """The entries every dict a function of the file returns holds (`return inputs` after `inputs = {...}` on
    each branch, or `return {...}`), keys it writes again or drops left out; None where one return is not such
    a dict. The values are the function's own expressions: read for whether a key is passed, not evaluated."""
    functions = getattr(scope, "functions", None)
    function = functions.callee(call, getattr(scope, "function", None)) if functions is not None else None
    if function is None:
        return None
    flow = functions.flow(function)
    common: Optional[Dict[str, cst.BaseExpression]] = None
    for returned, node in functions.returns(function):
        displays = [returned]
        name = dotted_name(returned)
        if name is not None:
            reaching = flow.reaching(node, name)
            if not reaching or any(d.kind != "assign" or d.unpacked for d in reaching):
                return None
            written = _rewritten_keys(function, name)
            if written is None:
                return None
            displays = [d.value for d in reaching]
        else:
            written = frozenset()
        for display in displays:
            entries = _display_entries(display)
            if entries is None:
                return None
            entries = {key: value for key, value in entries.items() if key not in written}
            common = entries if common is None else {k: v for k, v in common.items() if k in entries}
    return common


def _rewritten_keys(owner: cst.CSTNode, name: str) -> Optional[FrozenSet[str]]:
    """The string keys the function stores into or deletes from the dict `name` (`inputs["k"] = v`,
    `del inputs["k"]`); None when it changes the dict in a way that may drop any key (`inputs.pop(k)`,
    `del inputs[key]`, `inputs.update(...)`)."""
    keys = set()
    for part in preorder(owner):
        targets: List[cst.BaseExpression] = []
        if isinstance(part, cst.Assign):
            targets = [t.target for t in part.targets]
        elif isinstance(part, (cst.AugAssign, cst.AnnAssign)):
            targets = [part.target]
        elif isinstance(part, cst.Del):
            targets = [e.value for e in part.target.elements] if isinstance(part.target, cst.Tuple) \
                else [part.target]
        elif isinstance(part, cst.Call) and isinstance(part.func, cst.Attribute) \
                and dotted_name(part.func.value) == name and part.func.attr.value in _DICT_CHANGES:
            return None
        for target in targets:
            if isinstance(target, cst.Subscript) and dotted_name(target.value) == name:
                key = string_value(target.slice[0].slice.value) if len(target.slice) == 1 \
                    and isinstance(target.slice[0].slice, cst.Index) else None
                if key is None:
                    return None
                keys.add(key)
    return frozenset(keys)


def passed_as_itself(function: cst.FunctionDef, parameter: str, functions: "Functions") -> bool:
    """Every call of `function` in the file passes the very name `parameter` for it (`train(args, loader, model)`
    in the function that binds `model`): the file's bindings of that name are what the parameter holds."""
    passings = functions.passings(function)
    if not passings:
        return False
    for passing in passings:
        value, _ = passing.argument(function, parameter)
        if value is None or dotted_name(value) != parameter:
            return False
    return True


def returned_part(value: cst.BaseExpression, slot: Tuple[int, ...]) -> Optional[cst.BaseExpression]:
    """`slot_of`, and the first elements of a tuple put in front of others: `(loss,) + outputs`."""
    if slot and isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add) \
            and isinstance(value.left, cst.Tuple) and slot[0] < len(value.left.elements):
        return slot_of(value.left, slot)
    return slot_of(value, slot)


def reaching_classes(functions: "Functions", function: cst.FunctionDef, at: int, name: str, names: ModuleNames,
                     depth: int = 0) -> Optional[List[cst.BaseExpression]]:
    """The class expressions `name` is built from where control-flow node `at` of `function` reads it: from the
    definitions that reach `at` when the function binds the name (`model = Model(...)`, then `model =
    Wrapper(model)` in the same function: the earlier class no longer counts); for a parameter every call of
    the function in the file passes by that very name (`passed_as_itself`), from what reaches each call; else
    from the file's bindings (`built_classes`: a module-level name, an attribute set in another method). None
    when one is unknown."""
    if depth > _DEPTH:
        return None
    definitions = functions.flow(function).reaching(at, name)
    if not definitions:
        return built_classes(names, name, depth, set())
    found: List[cst.BaseExpression] = []
    for definition in definitions:
        if definition.kind == "parameter":
            passed = _passed_classes(functions, function, name, names, depth)
            if passed is None:
                return None
            found += passed
            continue
        if definition.kind != "assign" or definition.value is None:
            return None
        index = None
        if definition.unpacked:
            if not definition.position or len(definition.position) != 1:
                return None
            index = definition.position[0]
        # `model = DDP(model)`, `model = self.model`: what that name held there
        inner = _binding_classes(Binding(definition.value, index), lambda again, at=definition.node: reaching_classes(
            functions, function, at, again, names, depth + 1))
        if inner is None:
            return None
        found += inner
    return list({id(built): built for built in found}.values())


def _passed_classes(functions: "Functions", function: cst.FunctionDef, parameter: str, names: ModuleNames,
                    depth: int) -> Optional[List[cst.BaseExpression]]:
    """The classes of what every call of `function` in the file passes for `parameter` by that very name
    (`train(args, model)` after `model = Model(...)` in `main`), read where each call is made."""
    passings = functions.passings(function)
    if not passings or not passed_as_itself(function, parameter, functions):
        return None
    found: List[cst.BaseExpression] = []
    for passing in passings:
        value, _ = passing.argument(function, parameter)
        caller = passing.caller
        node = _node_making(functions.flow(caller), value) if caller is not None and value is not None else None
        inner = reaching_classes(functions, caller, node, parameter, names, depth + 1) if node is not None \
            else built_classes(names, parameter, depth, set())
        if inner is None:
            return None
        found += inner
    return found


def _node_making(flow: "FunctionFlow", expression: cst.BaseExpression) -> Optional[int]:
    """The control-flow node of a simple statement that holds `expression`."""
    for node in flow.graph.nodes:
        if isinstance(node.syntax, cst.BaseSmallStatement) and _makes(node.syntax, expression):
            return node.index
    return None


def _class_built(binding: Binding) -> Optional[cst.BaseExpression]:
    """The class a binding's value builds (`Ner` of `Ner.from_pretrained(path).cuda()`), None for other values."""
    value = binding.value
    if binding.index is not None:
        value = slot_of(value, (binding.index,))
    # `Model(...).cuda()`, `Model(...).to(device)`: the module itself, moved
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value in _MOVES and isinstance(value.func.value, cst.Call):
        value = value.func.value
    if not isinstance(value, cst.Call):
        return None
    built = value.func
    if isinstance(built, cst.Attribute) and built.attr.value in LOADERS:
        built = built.value
    return built


def built_classes(names: ModuleNames, name: str, depth: int, seen: set) -> Optional[List[cst.BaseExpression]]:
    """The class expressions every binding of `name` in the file builds it from (`Ner` for `model =
    Ner.from_pretrained(path)`); None when a binding is something else."""
    if depth > _DEPTH or name in seen:
        return None
    seen = seen | {name}
    bindings = names.bindings.get(name, ())
    if not bindings:
        return None
    found: List[cst.BaseExpression] = []
    for binding in bindings:
        if wrapped_name(binding) == name:
            continue  # `model = DataParallel(model)`: the same model
        inner = _binding_classes(binding, lambda again: built_classes(names, again, depth + 1, seen))
        if inner is None:
            return None
        found += inner
    return found


def _binding_classes(binding: Binding, wrapped: Callable[[str], Optional[List[cst.BaseExpression]]]
                     ) -> Optional[List[cst.BaseExpression]]:
    """The classes one binding builds its name from: those `wrapped` gives for the name it wraps, moves or
    copies (`DDP(model)`, `model.to(device)`, `self.model`), else the class it builds; None when unknown."""
    again = wrapped_name(binding)
    if again is not None:
        return wrapped(again)
    built = _class_built(binding)
    return None if built is None else [built]


def _forward_of(built: cst.BaseExpression, names: ModuleNames, functions: "Functions", call: cst.Call,
                spread: Mapping[str, cst.BaseExpression], depth: int = 0) -> Optional[List[Forward]]:
    """The `forward` of the class `built` names: of this file, of another file of the project, or of the
    one class every entry of a table of classes gives (`model_class` of
    `config_class, model_class, tokenizer_class = MODEL_CLASSES[key]`)."""
    name = dotted_name(built)
    if name is None or depth > _DEPTH:
        return None
    if "." not in name:
        method = functions.method_of_class(name, "forward")
        if method is not None:
            return [_read(method, name, functions, names, call, spread, None)]
    target = names.imported(name)
    if target is not None:
        found = names.project.read_definition(target) if names.project is not None else None
        if found is None:
            return None
        module, definition = found
        if not isinstance(definition, cst.ClassDef):
            return None
        method = module.functions.method_of_class(definition.name.value, "forward")
        if method is None:
            return None
        return [_read(method, definition.name.value, module.functions, module.names, call, spread,
                      str(module.path))]
    return _from_table(name, names, functions, call, spread, depth)


def _from_table(name: str, names: ModuleNames, functions: "Functions", call: cst.Call,
                spread: Mapping[str, cst.BaseExpression], depth: int) -> Optional[List[Forward]]:
    """`model_class` bound from a table of classes: `MODEL_CLASSES[key]` (unpacked, or one element of it), a
    dict whose every entry gives one class: the `forward` of each, or None when one is unknown."""
    bindings = names.bindings.get(name, ())
    if len(bindings) != 1:
        return None
    binding = bindings[0]
    table = binding.value
    if not isinstance(table, cst.Subscript):
        return None
    entries = names.values_of(dotted_name(table.value) or "")
    if len(entries) != 1 or not isinstance(entries[0], cst.Dict) or not entries[0].elements:
        return None
    forwards = []
    for element in entries[0].elements:
        if not isinstance(element, cst.DictElement):
            return None
        value = slot_of(element.value, (binding.index,)) if binding.index is not None else element.value
        forward = _forward_of(value, names, functions, call, spread, depth + 1) if value is not None else None
        if forward is None:
            return None
        forwards += forward
    return forwards


def _read(method: cst.FunctionDef, class_name: str, functions: "Functions", names: ModuleNames, call: cst.Call,
          spread: Mapping[str, cst.BaseExpression], path: Optional[str]) -> Forward:
    from torchlint.training.calls import argument_for, literal_truth

    flow = functions.flow(method)
    graph = flow.graph
    assigned = {d.name for d in graph.definitions if d.kind != "parameter"}
    blocked: FrozenSet[int] = frozenset()
    given = set()
    starred = any(arg.star for arg in call.args)
    for parameter in method.params.params + method.params.kwonly_params:
        name = parameter.name.value
        if name in assigned:
            continue
        argument = argument_for(call, method, name, bound=True) or spread.get(name)
        # `model(ids, True)` of `forward(self, ids, train=False)`: the branches of `if train:` it cannot take
        passed = argument if argument is not None else None if starred else parameter.default
        truth = literal_truth(passed) if passed is not None else None
        if truth is not None:
            blocked |= graph.against_truth(name, truth)
        if argument is None or (isinstance(argument, cst.Name) and argument.value == "None"):
            continue
        given.add(name)
        blocked |= graph.known_none(name)
    blocked |= graph.one_of_none(frozenset(given))  # `if start is not None and end is not None:`, both given
    return Forward(method, class_name, functions, names, flow, flow.pruned(blocked), path)
