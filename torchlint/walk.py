"""Read-only walks over LibCST trees, several times faster than `CSTNode.visit`.

`visit` rebuilds every node it passes (it is made for transformers) and walks
whitespace, commas and parentheses too. The analysis only reads: these walks
follow a node's dataclass fields, skip the fields that hold only layout, and
visit children in source order, as `visit` does.
"""

from __future__ import annotations

import contextlib
from dataclasses import fields
from operator import attrgetter
from typing import Callable, Dict, Iterator, List, Optional, Set, Tuple, Type

import libcst as cst

# Fields that hold layout only: whitespace, punctuation, parentheses, comments and blank lines.
_LAYOUT = frozenset(
    {
        "lpar", "rpar", "lbracket", "rbracket", "lbrace", "rbrace", "comma", "semicolon", "dot", "equal", "colon",
        "first_colon", "second_colon", "leading_lines", "lines_after_decorators", "header", "footer", "indent",
        "trailing_whitespace", "leading_whitespace", "asynchronous", "whitespace_between", "trailing_comma",
        "star", "posonly_ind", "encoding", "default_indent", "default_newline", "has_trailing_newline",
        "operator",
    }
)
# Where source order differs from field order (checked against LibCST's own child order by tests/test_walk.py).
_SOURCE_ORDER: Dict[Type[cst.CSTNode], Tuple[str, ...]] = {
    cst.IfExp: ("body", "test", "orelse"),
    cst.FunctionDef: ("decorators", "name", "type_parameters", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "name", "type_parameters", "bases", "keywords", "body"),
    cst.Arg: ("keyword", "value"),
    cst.Parameters: ("posonly_params", "params", "star_arg", "kwonly_params", "star_kwarg"),
    cst.ExceptHandler: ("type", "name", "body"),
    cst.ExceptStarHandler: ("type", "name", "body"),
    cst.MatchCase: ("pattern", "guard", "body"),
    cst.TypeAlias: ("name", "type_parameters", "value"),
}
_FIELDS: Dict[type, Tuple[str, ...]] = {}


def _child_fields(kind: type) -> Tuple[str, ...]:
    names = _FIELDS.get(kind)
    if names is None:
        names = _SOURCE_ORDER.get(kind) or tuple(
            f.name for f in fields(kind) if f.name not in _LAYOUT and not f.name.startswith("whitespace")
        )
        _FIELDS[kind] = names
    return names


def _subclasses(kind: type) -> Set[type]:
    found = {kind}
    for sub in kind.__subclasses__():
        found |= _subclasses(sub)
    return found


# Every node class LibCST defines, and the other types met in fields; a type met first after import (a class
# made later) is sorted once, by `_is_node`.
_NODES: Set[type] = _subclasses(cst.CSTNode)
_OTHERS: Set[type] = {type(None), str, bool, int, tuple, list}


def _is_node(kind: type) -> bool:
    if kind in _NODES:
        return True
    if kind in _OTHERS:
        return False
    node = issubclass(kind, cst.CSTNode)
    (_NODES if node else _OTHERS).add(kind)
    return node


# Per node class, one call that reads its meaningful fields: `attrgetter` reads them all in C.
_READERS: Dict[type, Callable[[cst.CSTNode], tuple]] = {}


def _reader(kind: type) -> Callable[[cst.CSTNode], tuple]:
    names = _child_fields(kind)
    if len(names) > 1:
        reader = attrgetter(*names)
    elif names:
        single = attrgetter(names[0])
        reader = lambda node: (single(node),)  # noqa: E731 - one field: `attrgetter` gives the value, not a tuple
    else:
        reader = lambda node: ()  # noqa: E731
    _READERS[kind] = reader
    return reader


# While one file is analysed (`remembering`), each node's children as `children` found them, by the node's id,
# with the node itself: it stays alive while it is remembered, so no other node takes its id meanwhile. The facts
# and rules of a file walk the same statements again and again (about four times each node).
_MEMO: Optional[Dict[int, Tuple[cst.CSTNode, List[cst.CSTNode]]]] = None


@contextlib.contextmanager
def remembering() -> Iterator[None]:
    """`children` remembers each node's answer inside the block (LibCST's nodes never change), and forgets
    them all after it; nested blocks share the outermost one's."""
    global _MEMO
    if _MEMO is not None:
        yield
        return
    _MEMO = {}
    try:
        yield
    finally:
        _MEMO = None


def children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """The node's children that carry meaning, in source order. The list may be one `children` gave before
    (`remembering`): read it, never change it."""
    memo = _MEMO
    if memo is not None:
        known = memo.get(id(node))
        if known is not None and known[0] is node:
            return known[1]
    reader = _READERS.get(type(node)) or _reader(type(node))
    found: List[cst.CSTNode] = []
    nodes, others = _NODES, _OTHERS
    for value in reader(node):
        kind = type(value)
        if kind in nodes:
            found.append(value)
        elif kind is tuple or kind is list:
            for item in value:
                kind = type(item)
                if kind in nodes or (kind not in others and _is_node(kind)):
                    found.append(item)
        elif kind not in others and _is_node(kind):
            found.append(value)
    if memo is not None:
        memo[id(node)] = (node, found)
    return found


def calls_in(node: cst.CSTNode) -> List[cst.Call]:
    """Every call in `node`, inner calls before the calls that contain them (lambda bodies excluded)."""
    calls: List[cst.Call] = []
    # A call is met twice: as a node, when its children go on the stack after it, and as `(call,)`, once they
    # are done. LibCST's node classes have no subclasses; `isinstance` on their ABCs is many times slower.
    stack: list = [node]
    pop, extend, push = stack.pop, stack.extend, stack.append
    call, lambda_ = cst.Call, cst.Lambda
    while stack:
        current = pop()
        kind = type(current)
        if kind is tuple:
            calls.append(current[0])
            continue
        if kind is lambda_:
            continue
        if kind is call:
            push((current,))
        below = children(current)
        if below:
            extend(reversed(below))
    return calls


def preorder(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """`node` and every node below it, parents before children, in source order."""
    stack = [node]
    pop, extend = stack.pop, stack.extend
    while stack:
        current = pop()
        yield current
        below = children(current)
        if below:
            extend(reversed(below))


def contains(tree: cst.CSTNode, part: cst.CSTNode) -> bool:
    """`part`, or code equal to it, occurs somewhere in `tree`."""
    return any(node.deep_equals(part) for node in preorder(tree))
