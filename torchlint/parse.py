"""LibCST's parse, without the checks every node runs on itself as it is built.

A node of LibCST validates its fields when it is constructed (parentheses that
balance, the whitespace a keyword needs). The nodes its parser builds from
source text hold by construction, and those checks are about a third of the
parse (LibCST's own comment on `CSTNode.__post_init__` proposes moving them
out of the parse). Here they are switched off while the parser builds a
tree, and only then: nodes made afterwards (by a fix) are checked as ever.

The switch is the class's, so it holds for the whole process while a parse
runs: torchlint does all its LibCST work on one thread (the command's, or the
language server's lint worker, which also builds its fixes), so no node is
built elsewhere meanwhile.
"""

from __future__ import annotations

import libcst as cst
from libcst import CSTNode

_CHECKED = CSTNode.__post_init__


def _unchecked(self: CSTNode) -> None:
    return None


def parse_module(text: str) -> cst.Module:
    """`libcst.parse_module(text)`: the same tree and the same errors, about a third faster."""
    CSTNode.__post_init__ = _unchecked
    try:
        return cst.parse_module(text)
    finally:
        CSTNode.__post_init__ = _CHECKED
