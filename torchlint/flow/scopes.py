"""Scopes inside an expression: the names a comprehension or a lambda binds are its own.

In `[l.backward() for l in losses]` the `l` is the comprehension's name, not
the function's `l` (which may be a running sum two lines up); the same for
a generator, set or dict comprehension and for a lambda's parameters. A
comprehension's first iterable (`losses`) is evaluated in the enclosing
scope; its conditions, later iterables and element in its own. A walrus
(`(n := len(x))`) binds in the enclosing function even inside a
comprehension, so it is not a name of the comprehension.

The control-flow graph's definitions and uses ask here, so a name bound by
a comprehension is never taken for the function's name of the same spelling.
"""

from __future__ import annotations

import builtins
import re
import symtable
import warnings
from typing import Callable, FrozenSet, List, Optional, Sequence, Union

import libcst as cst

from torchlint.names import dotted_name
from torchlint.text import lines_spelling
from torchlint.walk import children

Comprehension = Union[cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp]
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
# visit(node, names bound around it) -> False to stop descending into the node
Visit = Callable[[cst.CSTNode, FrozenSet[str]], bool]


def bound_around(root: cst.CSTNode, part: cst.CSTNode) -> FrozenSet[str]:
    """The names the comprehensions and lambdas of `root` bind where `part` (found by identity) sits:
    `{"l"}` for `l.backward()` in `[l.backward() for l in losses]`; empty outside any."""
    found: List[FrozenSet[str]] = []

    def visit(node: cst.CSTNode, bound: FrozenSet[str]) -> bool:
        if node is part:
            found.append(bound)
        return not found

    _walk(root, frozenset(), visit)
    return found[0] if found else frozenset()


def free_names(expression: cst.CSTNode, lambdas: bool = False) -> List[str]:
    """The dotted names `expression` reads from the enclosing scope (`a`, `self.h`, and for an attribute
    also its first name), outermost first: not those a comprehension or lambda inside it binds; a
    lambda's body only with `lambdas` (it runs when called, not here; its defaults run here)."""
    found: List[str] = []

    def visit(node: cst.CSTNode, bound: FrozenSet[str]) -> bool:
        if isinstance(node, (cst.Name, cst.Attribute)):
            name = dotted_name(node)
            if name is not None:
                first = name.split(".", 1)[0]
                if first not in bound:
                    found.append(name)
                    if name != first:
                        found.append(first)
                return False
        return True

    _walk(expression, frozenset(), visit, lambda_bodies=lambdas)
    return found


def reads(expression: cst.CSTNode, name: str) -> bool:
    """`expression` reads `name` (or an attribute of it) of the enclosing scope, outside lambdas."""
    return any(read == name or read.startswith(name + ".") for read in free_names(expression))


def reads_any(expression: cst.CSTNode, names: FrozenSet[str]) -> bool:
    """`expression` reads one of `names` from the enclosing scope as it runs: not a keyword argument's name or an
    attribute's, nor a name a comprehension or lambda binds, nor inside a lambda's body."""
    hit: List[cst.Name] = []

    def visit(node: cst.CSTNode, bound: FrozenSet[str]) -> bool:
        if hit:
            return False
        if isinstance(node, cst.Arg):
            _walk(node.value, bound, visit, lambda_bodies=False)
            return False
        if isinstance(node, cst.Attribute):
            _walk(node.value, bound, visit, lambda_bodies=False)
            return False
        if isinstance(node, cst.Name):
            if node.value in names and node.value not in bound:
                hit.append(node)
            return False
        return True

    _walk(expression, frozenset(), visit, lambda_bodies=False)
    return bool(hit)


def comprehension_targets(node: Comprehension) -> FrozenSet[str]:
    """The names a comprehension's `for` targets bind: `{"k", "v"}` for `{k: f(v) for k, v in d.items()}`."""
    names = set()
    comp: Optional[cst.CompFor] = node.for_in
    while comp is not None:
        names.update(_target_names(comp.target))
        comp = comp.inner_for_in
    return frozenset(names)


def _walk(node: cst.CSTNode, bound: FrozenSet[str], visit: Visit, lambda_bodies: bool = True) -> None:
    if not visit(node, bound):
        return
    if isinstance(node, _COMPREHENSIONS):
        inner = bound | comprehension_targets(node)
        comp: Optional[cst.CompFor] = node.for_in
        first = True
        while comp is not None:
            _walk(comp.iter, bound if first else inner, visit, lambda_bodies)  # the first: the enclosing scope's
            for condition in comp.ifs:
                _walk(condition.test, inner, visit, lambda_bodies)
            first = False
            comp = comp.inner_for_in
        parts: Sequence[cst.CSTNode] = (node.key, node.value) if isinstance(node, cst.DictComp) else (node.elt,)
        for part in parts:
            _walk(part, inner, visit, lambda_bodies)
        return
    if isinstance(node, cst.Lambda):
        parameters = node.params
        for param in (*parameters.posonly_params, *parameters.params, *parameters.kwonly_params):
            if param.default is not None:
                _walk(param.default, bound, visit, lambda_bodies)  # evaluated where the lambda is made
        if lambda_bodies:
            _walk(node.body, bound | frozenset(parameter_names(node.params)), visit, lambda_bodies)
        return
    for child in children(node):
        _walk(child, bound, visit, lambda_bodies)


def parameter_names(parameters: cst.Parameters) -> List[str]:
    """The names a function's or a lambda's parameters bind, `*args` and `**kwargs` included."""
    names = [param.name.value for param in (*parameters.posonly_params, *parameters.params,
                                             *parameters.kwonly_params)]
    for star in (parameters.star_arg, parameters.star_kwarg):
        if isinstance(star, cst.Param):
            names.append(star.name.value)
    return names


def _target_names(target: cst.BaseExpression) -> List[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _target_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return [target.value] if isinstance(target, cst.Name) else []


_COMPREHENSION_SCOPES = frozenset({"listcomp", "setcomp", "dictcomp", "genexpr"})
# What binds names the statements do not spell: `import *`, `globals()` and its kin called by name (not
# `model.eval()`), `__builtins__`, `sys.modules`, IPython. The words come first and what must not stand before
# them is checked by `_binds_unspelled`: a pattern that opens with `\b` or a lookbehind is tried at every
# position of the text, several times slower on a big file than one that opens with its words.
_CALLED_BY_NAME = ("globals", "vars", "exec", "eval", "locals")
_UNSPELLED_BINDING = re.compile(r"import\s*\*|(?:" + "|".join(_CALLED_BY_NAME) + r")\s*\(|__builtins__|sys\.modules\b|"
                                r"get_ipython\b")


# An import that may sit in a function: indented, or after a `;` or a `:` (`def f(): import amp`). It lies on one
# line, so only the lines that spell `import` are searched (`_imports_in_a_block`).
_INDENTED_IMPORT = re.compile(r"(?:^[ \t]+|[;:][ \t]*)(?:from[ \t]+\S+[ \t]+)?import\b", re.MULTILINE)


def _imports_in_a_block(source: str) -> bool:
    """Whether a line of `source` holds an import that may sit in a block (`_INDENTED_IMPORT`)."""
    return any(_INDENTED_IMPORT.search(source, start, end) is not None
               for start, end in lines_spelling(source, "import"))


def _binds_unspelled(source: str) -> bool:
    """Whether `source` spells a way to bind names that its statements do not (`_UNSPELLED_BINDING`): the word
    is not the end of a longer word, and a call of `globals()` or its kin is not a method's (`model.eval()`)."""
    for match in _UNSPELLED_BINDING.finditer(source):
        word = match.group()
        if word == "__builtins__":
            return True
        before = source[match.start() - 1] if match.start() else " "
        if before.isalnum() or before == "_" or (before == "." and word.startswith(_CALLED_BY_NAME)):
            continue
        return True
    return False


def bound_only_in_functions(source: str) -> FrozenSet[str]:
    """Names the module imports only as locals of its functions (`from apex import amp` inside `__init__`), and
    binds nowhere else: not at its top level, in a class body or as another function's local, nor declared
    `global`, and in functions with no nested function or lambda that could read them: read by another
    function, they raise NameError (a module meant to be global, imported where only one function sees it). Empty when the module may bind
    names in ways its statements do not spell (a star import, `globals()`, `exec`, `sys.modules`, IPython) or when
    it does not compile."""
    if not _imports_in_a_block(source) or _binds_unspelled(source):
        return frozenset()  # no import inside a block: nothing to find, and no compile
    try:
        with warnings.catch_warnings():  # compiling warns of what the linted code does (`"\d"`): not ours to print
            warnings.simplefilter("ignore")
            top = symtable.symtable(source, "<module>", "exec")
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return frozenset()
    bound = {symbol.get_name() for symbol in top.get_symbols()
             if symbol.is_assigned() or symbol.is_imported() or symbol.is_namespace()}
    local: set = set()
    stack = list(top.get_children())
    while stack:
        table = stack.pop()
        children = table.get_children()
        stack.extend(children)
        symbols = table.get_symbols()
        if table.get_type() != "function":  # a class body's names are attributes, but count them as bound
            bound.update(symbol.get_name() for symbol in symbols if symbol.is_assigned() or symbol.is_imported())
            continue
        bound.update(symbol.get_name() for symbol in symbols if symbol.is_declared_global())
        readable = any(child.get_name() not in _COMPREHENSION_SCOPES for child in children)
        for symbol in symbols:
            if symbol.is_imported() and symbol.is_local() and not symbol.is_global():
                (bound if readable else local).add(symbol.get_name())
            elif symbol.is_local():
                bound.add(symbol.get_name())
    return frozenset(name for name in local - bound if not name.startswith("__") and not hasattr(builtins, name))


def names_bound_in(owner: cst.CSTNode) -> FrozenSet[str]:
    """The names a function binds anywhere in its body (not in the bodies of functions or classes nested in
    it, whose names it binds), its parameters included: its locals."""
    found: set = set()
    if isinstance(owner, cst.FunctionDef):
        found.update(parameter_names(owner.params))
    stack: List[cst.CSTNode] = list(children(owner.body)) if isinstance(owner, (cst.FunctionDef, cst.ClassDef)) \
        else list(children(owner))
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            found.add(node.name.value)
            continue
        if isinstance(node, cst.Lambda):
            continue
        if isinstance(node, cst.AssignTarget):
            found.update(_target_names(node.target))
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            found.update(_target_names(node.target))
        elif isinstance(node, (cst.For, cst.CompFor)):
            found.update(_target_names(node.target))
        elif isinstance(node, cst.AsName):
            found.update(_target_names(node.name))
        elif isinstance(node, cst.NamedExpr):
            found.update(_target_names(node.target))
        elif isinstance(node, cst.ImportAlias):
            name = dotted_name(node.name)
            if name is not None and node.asname is None:
                found.add(name.split(".", 1)[0])
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            found.update(item.name.value for item in node.names)
        stack.extend(children(node))
    return frozenset(found)
