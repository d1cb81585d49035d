"""Read-only walks over LibCST trees, several times faster than `CSTNode.visit`.

`visit` rebuilds every node it passes (it is made for transformers) and walks
whitespace, commas and parentheses too. The analysis only reads: these walks
follow a node's dataclass fields, skip the fields that hold only layout, and
visit children in source order, as `visit` does.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Dict, Iterator, List, Tuple, Type

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


def _is_node(kind: type) -> bool:
    known = _NODE_TYPES.get(kind)
    if known is None:
        known = _NODE_TYPES[kind] = issubclass(kind, cst.CSTNode)
    return known


_NODE_TYPES: Dict[type, bool] = {}


def children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """The node's children that carry meaning, in source order."""
    found: List[cst.CSTNode] = []
    for name in _child_fields(type(node)):
        value = getattr(node, name, None)
        kind = type(value)
        if kind is tuple or kind is list:
            found.extend(item for item in value if _is_node(type(item)))
        elif _is_node(kind):
            found.append(value)
    return found


def calls_in(node: cst.CSTNode) -> List[cst.Call]:
    """Every call in `node`, inner calls before the calls that contain them (lambda bodies excluded)."""
    calls: List[cst.Call] = []
    _collect_calls(node, calls)
    return calls


def _collect_calls(node: cst.CSTNode, calls: List[cst.Call]) -> None:
    kind = type(node)  # LibCST's node classes have no subclasses; `isinstance` on their ABCs is many times slower
    if kind is cst.Lambda:
        return
    for child in children(node):
        _collect_calls(child, calls)
    if kind is cst.Call:
        calls.append(node)


def preorder(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """`node` and every node below it, parents before children, in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def contains(tree: cst.CSTNode, part: cst.CSTNode) -> bool:
    """`part`, or code equal to it, occurs somewhere in `tree`."""
    return any(node.deep_equals(part) for node in preorder(tree))
