"""Give LibCST only the statements the analysis can see, and get the same findings.

Parsing is most of torchlint's time, and in most files that hold a training
loop the loop sits in one or two functions among many. The analysis reads:

- the whole of each function that holds a candidate loop (everything around
  the loop in it), and of every function whose name occurs there and whose
  text has `zero_grad`, the word `grad`, `detach`, `.data`, `Variable(`,
  `backward` or `.step(` in it, or whose name has `loss` in it, or that
  returns what it builds with a class, or that slices (`data[i : i + block]`),
  or that yields a remainder or returns one (a window index, `c % grad_accum_steps`)
  (the helpers a loop may call to reset or rescale gradients, to detach a
  state, that run the backward or the step for it, compute its loss, build a
  module for it or cut its batches from a packed stream,
  `torchlint.training.tokens`: the analysis reads a helper's body only to find
  `x.zero_grad()`, `p.grad = None`, `p.grad.zero_()`, `p.grad.div_(n)`, the
  detached values, the loss or the new module it returns, the cuts, the
  learning rate it reads (`param_groups`, `get_last_lr()`, `["lr"]`), and the
  backwards and steps it runs on every call,
  `torchlint.training.calls`, the window index a generator yields or a
  function returns, `torchlint.training.windows`); and the methods of a class whose name occurs
  there that spell one of those words (an object of it that the loop calls
  runs them: `scaler = Scaler()` ... `scaler(loss, optimizer)`);
- the names the whole file binds (`torchlint.names.ModuleNames`): imports,
  assignments, annotated assignments, `with ... as`, function definitions
  and their annotated parameters, wherever they are;
- the simple statements that call a function holding a candidate loop
  (`main()` under `if __name__ == "__main__":`, `train_one_epoch(...)` in an
  epoch loop): whether a loop runs once or once an epoch is read from them
  (`torchlint.training.calls.Functions.called_in_loop`);
- every statement that names a top-level function holding a candidate loop
  (a call, `init_distributed(dp=2)(train)(accum=4)`, `mp.spawn(train)`),
  with the whole function it is in, and the statements naming those
  functions in turn, three deep: what a loop's function is run with
  (`torchlint.training.calls.Functions.passings`).

Everywhere else, only the statements that bind names, and the headers of the
compound statements around them, are kept: every other simple statement
(calls, returns, asserts, docstrings...) is replaced by empty lines, or by
`pass` where a block would be left empty. Lines and columns of everything
kept stay where they were, and `ModuleNames` collects exactly the same
bindings, in the same order, so the findings are those of a whole parse
(tests/test_speed_modes.py compares them on the whole corpus).

A loop of the module's own code (outside any function or class: a script's
loop) reads all of that code, as a loop in a function reads its function: every
statement outside functions and classes is kept, and the functions and classes
it names are chosen as above. A file where a candidate is a function a framework
calls (`training_step`), or a loop in the body of a class, is parsed whole.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections import deque
from typing import Callable, Iterable, List, Optional, Set, Tuple

from torchlint.pywalk import calls, nodes as all_nodes
from torchlint.text import lines_spelling, split_lines
from torchlint.wrappers import AUTOGRAD_PACKAGES, HANDING_BACK, LOADERS, MODULE_WRAPPERS, SAME_MODULE_METHODS

_IDENTIFIER = re.compile(r"\w+")
_HELPER_WORDS = re.compile(r"\bgrad\b|zero_grad|detach|\.data\b|\bVariable\(|backward|\.step\(|param_groups|get_last_lr|"
                           r"\bget_lr\b|[\"']lr[\"']")
_WINDOW_RETURN = re.compile(r"\breturn\b[^\n]*%")
_CUT = re.compile(r"[\w)\]]\[[^\[\]\n]*:")  # `data[i : i + block]`: a batch cut from a stream (training.tokens)
_BINDING = (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign)  # what torchlint.names collects
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_FRAMEWORK_ROOTS = frozenset(package.split(".", 1)[0] for package in AUTOGRAD_PACKAGES)
_ATTRIBUTE_WRITES = re.compile(r"\bself\.\w+\s*[-+*/%]=|\bsetattr\(|__dict__")


def sparse_program(text: str, tree: ast.Module, loops: Iterable[ast.stmt]) -> Optional[Tuple[str, List[int]]]:
    """(text with what the analysis cannot see blanked, first line of each module-level statement kept);
    None when nothing can be left out, or when a loop outside a function needs the whole module."""
    global _MEMO
    _MEMO = {}
    try:
        return _sparse_program(text, tree, loops)
    finally:
        _MEMO = None


def _sparse_program(text: str, tree: ast.Module, loops: Iterable[ast.stmt]) -> Optional[Tuple[str, List[int]]]:
    if "\r" in text.replace("\r\n", ""):
        return None  # lone CR line breaks: CPython's line numbers would not be ours
    loop_ids = {id(loop) for loop in loops}
    held = _outermost_functions_holding(tree, loop_ids)
    if held is None:
        return None
    holders, in_script = held
    lines = split_lines(text)
    known: Set[str] = set()
    for function in holders:
        known.update(_IDENTIFIER.findall("".join(lines[first_line(function) - 1:function.end_lineno])))
    whole = {id(function) for function in holders}
    script: Set[int] = set()
    if in_script:  # a loop of the module's own code reads all of that code, as a loop in a function reads its function
        script, script_lines = _script(tree)
        known.update(_IDENTIFIER.findall("".join(lines[number - 1] for number in script_lines)))
    # An attribute a loop's method reads (`self.global_step`) starts where its class and the class's bases set it,
    # and other methods may write it (`training.loop._attribute_history`): the bases' names (their imports, the
    # file's classes of those names) and the methods that augment an attribute or write one by name are read.
    for class_def in _classes_holding(tree, holders):
        for base in class_def.bases:
            known.update(_identifiers(base))
        for method in class_def.body:
            if isinstance(method, _FUNCTIONS) and id(method) not in whole and _ATTRIBUTE_WRITES.search(
                    "".join(lines[first_line(method) - 1:method.end_lineno])):
                whole.add(id(method))
    constructed = _constructed_classes(tree)
    walked = _Walked()
    shaped: dict = {}  # function -> whether its shape makes it a helper (its name aside)
    # functions that declare names `global` (or `nonlocal`): what they do with a name a loop spells is done to the
    # loop's own variable (`global total` ... `total.backward()`), which the facts read there
    sharing = _sharing_functions(tree, text)
    grown = True
    while grown:
        grown = False
        for function, shared in sharing:
            if id(function) not in whole and not shared.isdisjoint(known):
                whole.add(id(function))
                known.update(_IDENTIFIER.findall("".join(lines[first_line(function) - 1:function.end_lineno])))
        pending: List[ast.stmt] = list(tree.body)
        while pending:  # the helpers named there that may reset gradients or detach: kept whole too
            statement = pending.pop()
            if isinstance(statement, ast.ClassDef) and statement.name in known:
                # an object of a class named there runs its methods when the loop calls it (`scaler(loss, opt)` its
                # `__call__`): those that may run a backward, a step or a reset are helpers too
                for method in statement.body:
                    body = "".join(lines[first_line(method) - 1:method.end_lineno]) \
                        if isinstance(method, _FUNCTIONS) and id(method) not in whole else ""
                    # and a predicate named there that tests a window (`batch_idx.is_interval(n)` returning
                    # `(self.idx + 1) % n == 0`): `TrainingLoop._method_condition` reads what it returns
                    if body and (_HELPER_WORDS.search(body) or (method.name in known and (
                            _WINDOW_RETURN.search(body) or _hands_on_elements(walked(method))))):
                        whole.add(id(method))
                        known.update(_IDENTIFIER.findall("".join(lines[first_line(method) - 1:method.end_lineno])))
            if isinstance(statement, _FUNCTIONS) and statement.name in known and id(statement) not in whole:
                helper = "".join(lines[first_line(statement) - 1:statement.end_lineno])
                if id(statement) not in shaped:
                    shaped[id(statement)] = _helper_shaped(statement, helper, walked(statement))
                if shaped[id(statement)]:
                    whole.add(id(statement))
                    known.update(_IDENTIFIER.findall(helper))
            pending.extend(inner_statements(statement))
        # `criterion = SSDLoss(...)` with `criterion` named there: the `__call__`/`forward` that training.origin
        # follows when the object is called (and what those name in turn)
        for method in _calls_of_objects(constructed, known):
            if id(method) not in whole:
                whole.add(id(method))
                known.update(_IDENTIFIER.findall("".join(lines[first_line(method) - 1:method.end_lineno])))
                grown = True
    used = _users_of(tree, whole, {function.name for function in holders if _top_level(function, tree)}, lines=lines)
    for statement in used:
        known.update(_IDENTIFIER.findall("".join(lines[first_line(statement) - 1:statement.end_lineno])))
    whole.update(id(statement) for statement in used if isinstance(statement, _FUNCTIONS))
    needed = (_needed_bindings(tree, whole, known)
              | _calls_of(tree, whole, {function.name for function in holders}, lines)
              | {id(statement) for statement in used} | script)
    # a factory that a kept binding calls (`self.model = build_ddp(model)` in `__init__`) and that returns a
    # wrapped module: training.wrapping reads its returns
    factories = [statement for statement in _statements(tree) if isinstance(statement, _FUNCTIONS)
                 and statement.name in known and id(statement) not in whole and _returns_wrapped(walked(statement))]
    if factories:
        whole.update(id(function) for function in factories)
        for function in factories:
            known.update(_IDENTIFIER.findall("".join(lines[first_line(function) - 1:function.end_lineno])))
        needed |= _needed_bindings(tree, whole, known)
    blanker = _Blanker(lines, whole, _keeping(tree.body, whole, needed))
    kept_top = blanker.block(tree.body, top=True)
    if not blanker.blanked:
        return None
    return "".join(blanker.lines), sorted(set(kept_top))


def _sharing_functions(tree: ast.Module, text: str) -> List[Tuple[ast.stmt, Set[str]]]:
    """(function, the names it declares `global` or `nonlocal`) for each function holding such a statement (in it
    or in a function nested in it): found by string searches first, statements alone walked."""
    lines = _declaration_lines(text)
    if not lines:
        return []
    found: List[Tuple[ast.stmt, Set[str]]] = []
    for function in _statements(tree):
        if isinstance(function, _FUNCTIONS) and bisect.bisect_left(lines, function.lineno) \
                < bisect.bisect_right(lines, function.end_lineno):
            names: Set[str] = set()
            pending: List[ast.stmt] = list(function.body)
            while pending:
                statement = pending.pop()
                if isinstance(statement, (ast.Global, ast.Nonlocal)):
                    names.update(statement.names)
                pending.extend(inner_statements(statement))
            if names:
                found.append((function, names))
    return found


def _declaration_lines(text: str) -> List[int]:
    """The numbers of the lines that start (after indentation) with `global ` or `nonlocal `, sorted."""
    found = set()
    for word in ("global", "nonlocal"):
        for start, end in lines_spelling(text, word):
            line = text[start:end].lstrip()
            if line.startswith(word) and line[len(word):len(word) + 1] in (" ", "\t", "\\"):
                found.add(text.count("\n", 0, start) + 1)
    return sorted(found)


class _Walked:
    """`list(ast.walk(function))` (`torchlint.pywalk.nodes`), each function walked once however many shapes are
    asked of it."""

    def __init__(self) -> None:
        self._nodes: dict = {}

    def __call__(self, function: ast.stmt) -> List[ast.AST]:
        nodes = self._nodes.get(id(function))
        if nodes is None:
            nodes = self._nodes[id(function)] = all_nodes(function)
        return nodes


def _helper_shaped(function: ast.stmt, text: str, nodes: List[ast.AST]) -> bool:
    """Whether a function named by what the analysis reads is a helper it reads whole, by its text and shape: what
    training.roles.GradWork, training.graph and training.calls look for; a `compute_loss` whose returned loss
    training.origin follows; a `get_batch` whose cuts training.tokens reads; and the shapes below."""
    return bool(_HELPER_WORDS.search(text) or "loss" in function.name.lower() or _builds_module(nodes)
                or _CUT.search(text) or _hands_back_parameter(function, nodes) or _hands_out_remainder(nodes)
                or _hands_on_elements(nodes) or _returns_dict(nodes) or _calls_parameter(function, nodes))


def _calls_parameter(function: ast.stmt, nodes: List[ast.AST]) -> bool:
    """A function that calls one of its parameters, or its `forward` (`outputs = model(samples)`): TL016 reads the
    forward of a DDP model a loop hands it."""
    arguments = function.args
    parameters = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    for node in nodes:
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "forward":
                func = func.value
            if isinstance(func, ast.Name) and func.id in parameters:
                return True
    return False


def _hands_out_remainder(nodes: List[ast.AST]) -> bool:
    """A generator that computes a remainder (`c % grad_accum_steps`), or a function that returns one:
    training.windows reads the window index it may yield to the loop (`{"grad_accum_index": c % n}`) or
    return (`return step % n`). `nodes`: the function's, walked."""
    if any(isinstance(node, ast.Return) and isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.Mod)
           for node in nodes):
        return True
    return any(isinstance(node, ast.Yield) for node in nodes) and any(
        isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) for node in nodes)


def _returns_dict(nodes: List[ast.AST]) -> bool:
    """A function that returns and builds a dict display (`inputs = {"input_ids": ..., "labels": ...}`): the
    keys a loop's `model(**inputs)` passes are read from what it returns (training.forward.spread_keywords)."""
    return _returns_with(nodes, lambda node: isinstance(node, ast.Dict) and bool(node.keys))


def _hands_on_elements(nodes: List[ast.AST]) -> bool:
    """A generator that yields the target of a `for` loop (`for obj in iterable: ... yield obj`, a logger's
    `log_every`): training.windows reads whether the loop it wraps keeps its elements and their order."""
    for node in nodes:
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and any(
                isinstance(inner, ast.Yield) and isinstance(inner.value, ast.Name) and inner.value.id == node.target.id
                for inner in all_nodes(node)):
            return True
    return False


def _returns_wrapped(nodes: List[ast.AST]) -> bool:
    """A function that returns something and wraps a module (`return DDP(model, ...)`)."""
    return _returns_with(
        nodes, lambda node: isinstance(node, ast.Call) and _callee_last_part(node.func) in MODULE_WRAPPERS)


def _builds_module(nodes: List[ast.AST]) -> bool:
    """A function that returns what it builds with a class (`return nn.Sequential(...)`, `return head, opt`
    after `head = MLP(d)`): training.roles reads whether a module it returns is new."""
    return _returns_with(
        nodes, lambda node: isinstance(node, ast.Call) and _callee_last_part(node.func)[:1].isupper())


def _returns_with(nodes: List[ast.AST], kind: Callable[[ast.AST], bool]) -> bool:
    """A function that returns a value and holds a node `kind` accepts (`nodes`: the function's, walked)."""
    return any(isinstance(node, ast.Return) and node.value is not None for node in nodes) and any(
        kind(node) for node in nodes)


def _constructed_classes(tree: ast.Module) -> Tuple[dict, dict]:
    """(last part of each name bound to a call of a plain name -> those names, class name -> its definitions).
    A class's loader counts as a call of it: `model = Ner.from_pretrained(path)` (training.forward), and so does
    the object moved: `model = Net().to(device)`."""
    bound: dict = {}
    classes: dict = {}
    pending: List[ast.stmt] = list(tree.body)
    while pending:  # statements only: neither a class nor an assignment sits in an expression
        node = pending.pop()
        pending.extend(inner_statements(node))
        if isinstance(node, ast.ClassDef):
            classes.setdefault(node.name, []).append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
            func = node.value.func
            while isinstance(func, ast.Attribute) and func.attr in SAME_MODULE_METHODS \
                    and isinstance(func.value, ast.Call):
                func = func.value.func  # `Net().to(device)`, `Net().cuda()`: an object of `Net` all the same
            if isinstance(func, ast.Attribute) and func.attr in LOADERS:
                func = func.value
            if not isinstance(func, ast.Name):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for part in _last_parts(target):
                    bound.setdefault(part, set()).add(func.id)
    return bound, classes


def _calls_of_objects(constructed: Tuple[dict, dict], known: Set[str]) -> List[ast.stmt]:
    """The `__call__` and `forward` methods of the classes (and their bases in the file) that a name in `known`
    is bound to an object of."""
    bound, classes = constructed
    pending = [name for target in known & set(bound) for name in bound[target]]
    seen: Set[str] = set()
    methods: List[ast.stmt] = []
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        for class_def in classes.get(name, ()):
            methods.extend(statement for statement in class_def.body
                           if isinstance(statement, _FUNCTIONS) and statement.name in ("__call__", "forward"))
            pending.extend(base.id for base in class_def.bases if isinstance(base, ast.Name))
    return methods


def _hands_back_parameter(function: ast.stmt, nodes: List[ast.AST]) -> bool:
    """A function that returns one of its parameters (`return model, preds, loss`): training.loop reads
    whether a name rebound to its result holds the very object passed (`TrainingLoop.handed_back`)."""
    arguments = function.args
    parameters = {argument.arg for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    for node in nodes:
        if isinstance(node, ast.Return) and node.value is not None:
            parts = node.value.elts if isinstance(node.value, (ast.Tuple, ast.List)) else [node.value]
            if any(isinstance(part, ast.Name) and part.id in parameters for part in parts):
                return True
    return False


def _callee_last_part(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _statements(tree: ast.Module) -> List[ast.AST]:
    """Every statement of the tree (and each `except` handler and `case`), in the order `ast.walk` meets them:
    breadth first, a handler's body one level below the handler. A `def` or a `class` never sits in an
    expression, so no expression is walked (a tenth of the nodes)."""
    found: List[ast.AST] = []
    queue = deque(tree.body)
    while queue:
        node = queue.popleft()
        found.append(node)
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list) and value and isinstance(value[0], _BLOCK_PARTS):
                queue.extend(value)
    return found


_BLOCK_PARTS = (ast.stmt, ast.excepthandler, ast.match_case)


def _classes_holding(tree: ast.Module, functions: List[ast.stmt]) -> List[ast.ClassDef]:
    """The classes of the file (and their bases of the file, by name) that have one of `functions` as a method."""
    ids = {id(function) for function in functions}
    classes = [node for node in _statements(tree) if isinstance(node, ast.ClassDef)]
    found = [class_def for class_def in classes if any(id(statement) in ids for statement in class_def.body)]
    by_name = {class_def.name: class_def for class_def in classes}
    pending = list(found)
    while pending:
        class_def = pending.pop()
        for base in class_def.bases:
            inherited = by_name.get(base.id) if isinstance(base, ast.Name) else None
            if inherited is not None and all(inherited is not other for other in found):
                found.append(inherited)
                pending.append(inherited)
    return found


def _outermost_functions_holding(tree: ast.Module, loop_ids: Set[int]) -> Optional[Tuple[List[ast.stmt], bool]]:
    """(the outermost function around each candidate loop, whether a loop is in the module's own code: in no
    function or class); None if a loop sits in the body of a class, outside its methods."""
    holders: List[ast.stmt] = []
    in_script = False
    # (statement, the outermost function around it, whether a class is around it and no function)
    pending: List[Tuple[ast.stmt, Optional[ast.stmt], bool]] = [(statement, None, False) for statement in tree.body]
    while pending:
        statement, function, in_class = pending.pop()
        if id(statement) in loop_ids:
            if function is not None:
                if all(function is not holder for holder in holders):
                    holders.append(function)
            elif in_class or isinstance(statement, _FUNCTIONS):
                return None  # a method or function a framework calls (`training_step`): parsed whole
            else:
                in_script = True
        if function is None and isinstance(statement, _FUNCTIONS):
            function = statement
        in_class = in_class or isinstance(statement, ast.ClassDef)
        pending.extend((child, function, in_class) for child in inner_statements(statement))
    return holders, in_script


def _script(tree: ast.Module) -> Tuple[Set[int], List[int]]:
    """(the statements of the module's own code: those in no function or class, at any depth of its `if`, `for`,
    `with` and `try` blocks; the lines they hold outside the functions and classes among them)."""
    found: Set[int] = set()
    numbers: List[int] = []
    pending: List[ast.stmt] = list(tree.body)
    while pending:
        statement = pending.pop()
        if isinstance(statement, _FUNCTIONS + (ast.ClassDef,)):
            continue
        found.add(id(statement))
        children = inner_statements(statement)
        first, last = first_line(statement), statement.end_lineno or statement.lineno
        own = set(range(first, last + 1))
        for child in children:  # a compound statement's own lines: its header and clauses (`else:`, `except E:`)
            own.difference_update(range(first_line(child), (child.end_lineno or child.lineno) + 1))
        numbers.extend(own)
        pending.extend(children)
    return found, sorted(set(numbers))


def _needed_bindings(tree: ast.Module, whole: Set[int], known: Set[str]) -> Set[int]:
    """The binding statements outside `whole` functions that a lookup may reach.

    A lookup asks for a name whose last part is in `known`, or found in a value that a binding
    reached this way assigns; a binding is reached when it binds such a name or wraps one
    (`model = DDP(net)` is found from `net`). Repeats until nothing more is reached. The imports of
    an autograd package are needed whatever is known (`_imports_framework`).
    """
    bindings: List[Tuple[ast.stmt, Set[str], Set[str]]] = []
    frameworks: Set[int] = set()
    pending: List[ast.stmt] = list(tree.body)
    while pending:
        statement = pending.pop()
        if isinstance(statement, _FUNCTIONS) and id(statement) in whole:
            continue
        if isinstance(statement, _BINDING) or isinstance(statement, (ast.With, ast.AsyncWith) + _FUNCTIONS):
            keys, values = _binding_names(statement)
            bindings.append((statement, keys, values))
            if _imports_framework(statement):
                frameworks.add(id(statement))
        pending.extend(inner_statements(statement))
    needed: Set[int] = set()
    grown = True
    while grown:
        grown = False
        for statement, keys, values in bindings:
            if id(statement) not in needed and keys & known:
                needed.add(id(statement))
                known |= keys | values
                grown = True
    return needed | frameworks


def _imports_framework(statement: ast.stmt) -> bool:
    """An import of a package that says whose autograd the file trains with (`import torch`, `from fastai.basics
    import *`, `import mxnet as mx`): kept whatever the kept code names, since `training.frameworks.Autograd`
    reads them all."""
    if isinstance(statement, ast.Import):
        modules = [alias.name for alias in statement.names]
    elif isinstance(statement, ast.ImportFrom) and not statement.level and statement.module:
        modules = [statement.module]
    else:
        return False
    return any(module.split(".", 1)[0] in _FRAMEWORK_ROOTS for module in modules)


def _calls_of(tree: ast.Module, whole: Set[int], functions: Set[str], lines: List[str]) -> Set[int]:
    """The simple statements outside `whole` functions that call one of `functions` (`main()`, `self.fit()`)."""
    found: Set[int] = set()
    if not functions:
        return found
    naming = _lines_naming(lines, functions)
    pending: List[ast.stmt] = list(tree.body)
    while pending:
        statement = pending.pop()
        if id(statement) in whole:
            continue
        children = inner_statements(statement)
        if not children and not isinstance(statement, _FUNCTIONS + (ast.ClassDef,)) \
                and _any_within(naming, first_line(statement), statement.end_lineno):
            for part in calls(statement):
                if _short_callee(part.func) in functions:
                    found.add(id(statement))
                    break
        pending.extend(children)
    return found


def _lines_naming(lines: List[str], names: Set[str]) -> List[int]:
    """The numbers of the lines that may name one of `names` (as part of a word, even; and every line with other
    than ASCII: `ｔrain` is `train` to Python): a statement whose lines hold none of them is not walked."""
    return [number for number, line in enumerate(lines, 1) if not line.isascii() or any(name in line for name in names)]


def _any_within(numbers: List[int], first: int, last: int) -> bool:
    """Whether the sorted `numbers` hold one from `first` to `last`."""
    at = bisect.bisect_left(numbers, first)
    return at < len(numbers) and numbers[at] <= last


def _users_of(tree: ast.Module, whole: Set[int], functions: Set[str], depth: int = 3,
              lines: Optional[List[str]] = None) -> List[ast.stmt]:
    """The statements that name one of the top-level `functions` (a call, `wrap(train)(accum=4)`, `mp.spawn(train)`),
    as the innermost function holding each (kept whole: its parameters, decorators and bindings are where the values
    it passes come from), or the statement itself outside any function; then those that name these functions in
    turn, `depth` deep (`torchlint.training.calls.Functions.passings`: what a loop's function is run with)."""
    found: List[ast.stmt] = []
    seen: Set[int] = set(whole)
    for _ in range(depth):
        naming = _lines_naming(lines, functions) if lines is not None else None
        users: List[ast.stmt] = []
        pending: List[Tuple[ast.stmt, Optional[ast.stmt]]] = [(statement, None) for statement in tree.body]
        while pending:
            statement, function = pending.pop()
            if id(statement) in whole:
                continue
            inside = statement if isinstance(statement, _FUNCTIONS) else function
            if (naming is None or _any_within(naming, first_line(statement), statement.end_lineno)) and any(
                    isinstance(node, ast.Name) and node.id in functions for node in _own_parts(statement)):
                user = function if function is not None and not isinstance(statement, _FUNCTIONS) else statement
                if id(user) not in seen:
                    seen.add(id(user))
                    users.append(user)
            pending.extend((child, inside) for child in inner_statements(statement))
        found.extend(users)
        functions = {user.name for user in users if isinstance(user, _FUNCTIONS) and _top_level(user, tree)}
        if not functions:
            break
    return found


def _top_level(function: ast.stmt, tree: ast.Module) -> bool:
    """A function of the module: defined at its top, or in an `if`/`try`/`with` there (as
    `torchlint.training.calls.Functions` indexes them)."""
    pending: List[ast.stmt] = list(tree.body)
    while pending:
        statement = pending.pop()
        if statement is function:
            return True
        if isinstance(statement, (ast.If, ast.Try, ast.With)):
            pending.extend(inner_statements(statement))
    return False


def _own_parts(statement: ast.stmt) -> Iterable[ast.AST]:
    """The expressions of a statement, not of the statements in its blocks."""
    for name, value in ast.iter_fields(statement):
        if name in ("body", "orelse", "finalbody", "handlers", "cases"):
            continue
        for part in value if isinstance(value, list) else [value]:
            if isinstance(part, ast.AST):
                yield from all_nodes(part)


def _short_callee(func: ast.expr) -> Optional[str]:
    """`step` for `step(...)` and `self.step(...)`, as torchlint.names.short_callee reads it."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        return func.attr
    return None


def _binding_names(statement: ast.stmt) -> Tuple[Set[str], Set[str]]:
    """(last parts of the names bound and of the names they wrap, identifiers of the values bound)."""
    keys: Set[str] = set()
    values: Set[str] = set()

    def bind(target: ast.expr, value: Optional[ast.expr]) -> None:
        keys.update(_last_parts(target))
        if value is not None:
            values.update(_identifiers(value))
            for inner in _wrapped(value):
                keys.update(_last_parts(inner))

    if isinstance(statement, ast.Import):
        keys.update((alias.asname or alias.name.split(".")[0]) for alias in statement.names)
    elif isinstance(statement, ast.ImportFrom):
        keys.update((alias.asname or alias.name) for alias in statement.names)
    elif isinstance(statement, ast.Assign):
        for target in statement.targets:
            bind(target, statement.value)
    elif isinstance(statement, ast.AnnAssign):
        bind(statement.target, statement.value)
        values.update(_identifiers(statement.annotation))
    elif isinstance(statement, _FUNCTIONS):
        keys.add(statement.name)
        arguments = statement.args
        for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
            if argument.annotation is not None:
                keys.add(argument.arg)
                values.update(_identifiers(argument.annotation))
    elif isinstance(statement, (ast.With, ast.AsyncWith)):
        for item in statement.items:
            if item.optional_vars is not None:
                bind(item.optional_vars, item.context_expr)
    return keys, values


def _identifiers(node: ast.AST) -> Set[str]:
    found = set()
    for part in all_nodes(node):
        if isinstance(part, ast.Name):
            found.add(part.id)
        elif isinstance(part, ast.Attribute):
            found.add(part.attr)
        elif isinstance(part, ast.keyword) and part.arg:
            found.add(part.arg)
    return found


def _last_parts(target: ast.expr) -> Set[str]:
    """The last part of every dotted name a target binds (`self.model` -> `model`)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_last_parts(element) for element in target.elts))
    if isinstance(target, ast.Starred):
        return _last_parts(target.value)
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, ast.Attribute):
        return {target.attr}
    return set()


def _wrapped(value: ast.expr) -> List[ast.expr]:
    """What a binding of `value` stands for again, as torchlint.names.wrapped_name reads it (or more):
    `model`, `model.to(device)`, `DDP(model)`, and every argument of `accelerator.prepare(...)` or `amp.initialize(...)`."""
    if isinstance(value, (ast.Name, ast.Attribute)):
        return [value]
    if not isinstance(value, ast.Call):
        return []
    func = value.func
    callee = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    found: List[ast.expr] = []
    if isinstance(func, ast.Attribute) and callee in SAME_MODULE_METHODS:
        found.append(func.value)
    if callee in HANDING_BACK:
        found.extend(value.args)
    elif callee in MODULE_WRAPPERS and value.args:
        found.append(value.args[0])
    return [part for part in found if isinstance(part, (ast.Name, ast.Attribute))]


def _keeping(statements: List[ast.stmt], whole: Set[int], needed: Set[int]) -> Set[int]:
    """The statements that are, or hold, a whole function or a needed binding: all others can go."""
    keeping: Set[int] = set()

    def visit(statement: ast.stmt) -> bool:
        keep = id(statement) in whole or id(statement) in needed
        if id(statement) not in whole:
            for child in inner_statements(statement):
                keep = visit(child) or keep
        if keep:
            keeping.add(id(statement))
        return keep

    for statement in statements:
        visit(statement)
    return keeping


class _Blanker:
    def __init__(self, lines: List[str], whole: Set[int], keeping: Set[int]) -> None:
        self.lines = lines
        self.whole = whole
        self.keeping = keeping
        self.blanked = False

    def block(self, statements: List[ast.stmt], top: bool = False) -> List[int]:
        """Blank what can go in one block; the first lines of the statements left (for the module)."""
        kept: List[int] = []
        emptied: List[ast.stmt] = []
        for index, statement in enumerate(statements):
            if self._removable(statement, statements, index):
                emptied.append(statement)
                continue
            kept.append(first_line(statement))
            if not (isinstance(statement, _FUNCTIONS) and id(statement) in self.whole):
                for inner in _blocks(statement):
                    self.block(inner)
        if not emptied:
            return kept
        first = emptied[0]
        indent = self.lines[first.lineno - 1][:first.col_offset]  # whitespace only: bytes are characters
        for statement in emptied:
            self._blank(first_line(statement), statement.end_lineno or statement.lineno)
        if not kept and not top:  # a block cannot be empty
            line = self.lines[first.lineno - 1]
            self.lines[first.lineno - 1] = indent + "pass" + line
        return kept

    def _removable(self, statement: ast.stmt, siblings: List[ast.stmt], index: int) -> bool:
        """A statement, simple or compound, that neither is nor holds anything the analysis reads,
        and has its lines to itself."""
        if id(statement) in self.keeping:
            return False
        first, last = first_line(statement), statement.end_lineno or statement.lineno
        if index > 0 and (siblings[index - 1].end_lineno or 0) >= first:
            return False
        if index + 1 < len(siblings) and first_line(siblings[index + 1]) <= last:
            return False
        if first == statement.lineno:  # a decorator always starts its line
            before = self.lines[first - 1].encode("utf-8")[:statement.col_offset]
            if before.strip():
                return False  # `if x: call()` or `a = 1; call()`: shares its line
        after = self.lines[last - 1].encode("utf-8")[statement.end_col_offset or 0:].decode("utf-8", "replace")
        return not after.strip() or after.lstrip().startswith("#")

    def _blank(self, first: int, last: int) -> None:
        self.blanked = True
        for number in range(first - 1, last):
            line = self.lines[number]
            self.lines[number] = line[len(line.rstrip("\r\n")):]


def first_line(statement: ast.stmt) -> int:
    """The line a statement starts on, its decorators included."""
    decorators = getattr(statement, "decorator_list", None)
    return min([statement.lineno] + [d.lineno for d in decorators]) if decorators else statement.lineno


def _blocks(statement: ast.stmt) -> List[List[ast.stmt]]:
    kind = type(statement)
    fields = _BLOCK_FIELDS.get(kind)
    if fields is None:
        fields = _BLOCK_FIELDS[kind] = (tuple(name for name in ("body", "orelse", "finalbody") if name in kind._fields),
                                        tuple(name for name in ("handlers", "cases") if name in kind._fields))
    own, parts = fields
    blocks = []
    for name in own:
        block = getattr(statement, name)
        if block and isinstance(block, list):
            blocks.append(block)
    for name in parts:
        blocks.extend(part.body for part in getattr(statement, name) or ())
    return blocks


# node type -> (its fields that hold a block of statements, its fields that hold handlers or cases with one each)
_BLOCK_FIELDS: dict = {}


# id of a statement -> its inner statements, while `sparse_program` runs (its tree alive, so no id is reused): it
# walks the statements a dozen times over
_MEMO: Optional[dict] = None


def inner_statements(statement: ast.stmt) -> List[ast.stmt]:
    """The statements of `statement`'s blocks: its body, `else` and `finally`, and the bodies of its `except`
    handlers or `match` cases, in that order."""
    memo = _MEMO
    if memo is not None:
        found = memo.get(id(statement))
        if found is None:
            found = memo[id(statement)] = [inner for block in _blocks(statement) for inner in block]
        return found
    return [inner for block in _blocks(statement) for inner in block]
