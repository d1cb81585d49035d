"""Walks over CPython's `ast` trees (the screen's), about twice as fast as `ast.walk`.

`ast.walk` goes breadth first through `ast.iter_child_nodes`, a generator that
looks up every field of every node by name. The screen walks loops and
functions of every file that spells a backward, so that is a good part of its
time. These walks keep one stack, read each class's fields from a table made
once, and leave out the operators and expression contexts (`Add()`, `Load()`):
leaves that hold nothing, which no caller asks for. The order is depth first,
not `ast.walk`'s: callers ask whether some node is there, or collect a set.
Nothing here imports LibCST.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple, Type

__all__ = ["calls", "nodes"]

# Fields that hold only an operator, an expression context or a plain value: never a node worth walking.
_LEAF_FIELDS = frozenset({"ctx", "op", "ops", "kind", "conversion", "type_comment", "is_async", "level"})
_FIELDS: Dict[Type[ast.AST], Tuple[str, ...]] = {}


def _fields(cls: Type[ast.AST]) -> Tuple[str, ...]:
    found = _FIELDS.get(cls)
    if found is None:
        found = _FIELDS[cls] = tuple(name for name in cls._fields if name not in _LEAF_FIELDS)
    return found


def nodes(node: ast.AST) -> List[ast.AST]:
    """`node` and every node under it, as `ast.walk` gives them, less operators and expression contexts."""
    return _walk(node, None)


def calls(node: ast.AST) -> List[ast.Call]:
    """Every call in `node`, itself included: `[n for n in ast.walk(node) if isinstance(n, ast.Call)]`."""
    return _walk(node, ast.Call)


def _walk(node: ast.AST, only: Optional[Type[ast.AST]]) -> list:
    """The nodes of `node` (all, or those of the class `only`: ast's node classes have no subclasses)."""
    found: list = []
    stack = [node]
    pop, push, keep, fields, known, AST = stack.pop, stack.append, found.append, _FIELDS.get, _fields, ast.AST
    while stack:
        node = pop()
        cls = type(node)
        if only is None or cls is only:
            keep(node)
        for name in fields(cls) or known(cls):
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, AST):
                        push(item)
            elif isinstance(value, AST):
                push(value)
    return found
