"""`path:line:col: TL003 [*] message`, one finding a line; `[*]` marks a safe fix."""

from __future__ import annotations

from typing import Dict, Sequence

from torchlint.model import Diagnostic


def fix_marker(diagnostic: Diagnostic) -> str:
    """`[*] ` when `--fix` would repair the finding (unsafe fixes need `--unsafe-fixes`)."""
    return "[*] " if diagnostic.fixable() else ""


def source_key(diagnostic: Diagnostic) -> str:
    """The key of the text a finding's lines refer to: the file, or one notebook cell."""
    return diagnostic.path if diagnostic.cell is None else f"{diagnostic.path}#cell{diagnostic.cell}"


def location(diagnostic: Diagnostic) -> str:
    cell = f"cell {diagnostic.cell}:" if diagnostic.cell is not None else ""
    return f"{diagnostic.path}:{cell}{diagnostic.line}:{diagnostic.column}"


def render_concise(diagnostics: Sequence[Diagnostic], sources: Dict[str, str], colour: bool) -> str:
    return "".join(
        f"{location(d)}: {d.code} {fix_marker(d)}{d.message}\n" for d in diagnostics
    )
