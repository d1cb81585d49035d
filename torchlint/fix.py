"""Apply fixes to a fixpoint, and write the result without ever losing data.

Invariants this module owns:
- fixes are applied in rounds (lint, apply the non-overlapping fixable
  findings, re-parse, lint again) until nothing fixable is left, at most
  `MAX_ROUNDS` times;
- a round whose result does not parse is retried fix by fix, and a fix that
  breaks the syntax is dropped and reported, never written;
- writing is atomic (temporary file in the same folder, then rename), keeps
  the encoding, BOM, line endings and file mode, and refuses to overwrite a
  file that changed since it was read.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Sequence, Tuple, Type

from torchlint.engine import Problem, SourceText, encode_source, lint_source
from torchlint.model import Diagnostic, Edit
from torchlint.text import split_lines

MAX_ROUNDS = 10


@dataclass
class FixOutcome:
    source: str
    fixed: List[Diagnostic] = field(default_factory=list)
    remaining: List[Diagnostic] = field(default_factory=list)
    dropped: List[Tuple[Diagnostic, str]] = field(default_factory=list)
    problems: List[Problem] = field(default_factory=list)
    converged: bool = True


class FixConflict(Exception):
    pass


def _offsets(lines: Sequence[str]) -> List[int]:
    starts, total = [], 0
    for line in lines:
        starts.append(total)
        total += len(line)
    starts.append(total)
    return starts


def _offset(starts: List[int], text_length: int, line: int, column: int) -> int:
    if line - 1 >= len(starts) - 1:
        return text_length
    return min(starts[line - 1] + column - 1, text_length)


def apply_edits(source: str, edits: Sequence[Edit]) -> str:
    """Apply non-overlapping edits; raise FixConflict if two overlap."""
    starts = _offsets(split_lines(source))
    spans = sorted(
        (_offset(starts, len(source), e.line, e.column), _offset(starts, len(source), e.end_line, e.end_column), e.content)
        for e in edits
    )
    pieces, cursor = [], 0
    for start, end, content in spans:
        if start < cursor:
            raise FixConflict("overlapping edits")
        pieces.append(source[cursor:start])
        pieces.append(content)
        cursor = end
    pieces.append(source[cursor:])
    return "".join(pieces)


def _parses(source: str) -> bool:
    import libcst as cst

    try:
        cst.parse_module(source)
    except Exception:  # noqa: BLE001 - any parser failure means "do not write this"
        return False
    return True


def _non_overlapping(diagnostics: Sequence[Diagnostic], source: str) -> List[Diagnostic]:
    starts = _offsets(split_lines(source))
    chosen: List[Diagnostic] = []
    taken: List[Tuple[int, int]] = []
    for diagnostic in diagnostics:
        spans = [
            (_offset(starts, len(source), e.line, e.column), _offset(starts, len(source), e.end_line, e.end_column))
            for e in diagnostic.fix.edits
        ]
        if any(s < t_end and t_start < e or s == t_start for s, e in spans for t_start, t_end in taken):
            continue
        chosen.append(diagnostic)
        taken.extend(spans)
    return chosen


def fix_source(source: str, path: str, rules: Sequence[Type], unsafe: bool = False) -> FixOutcome:
    """Fix `source` to a fixpoint; returns the new text and what was fixed, left and dropped."""
    outcome = FixOutcome(source)
    refused: set = set()
    for _ in range(MAX_ROUNDS):
        diagnostics, problems = lint_source(outcome.source, path, rules)
        outcome.problems = problems
        candidates = [
            d for d in diagnostics if d.fixable(unsafe) and (d.code, d.message) not in refused
        ]
        if not candidates:
            outcome.remaining = diagnostics
            return outcome
        chosen = _non_overlapping(candidates, outcome.source)
        edits = [edit for diagnostic in chosen for edit in diagnostic.fix.edits]
        attempt = apply_edits(outcome.source, edits)
        if _parses(attempt):
            outcome.source = attempt
            outcome.fixed.extend(chosen)
            continue
        # Some fix broke the syntax: apply them one at a time and drop the culprits.
        for diagnostic in chosen:
            single = apply_edits(outcome.source, diagnostic.fix.edits)
            if _parses(single):
                outcome.source = single
                outcome.fixed.append(diagnostic)
                break
            refused.add((diagnostic.code, diagnostic.message))
            outcome.dropped.append((diagnostic, "the fixed code would not parse"))
    diagnostics, outcome.problems = lint_source(outcome.source, path, rules)
    outcome.remaining = diagnostics
    outcome.converged = not any(d.fixable(unsafe) and (d.code, d.message) not in refused for d in diagnostics)
    return outcome


class WriteRefused(Exception):
    pass


def write_atomically(path: Path, text: str, original: SourceText, original_bytes: bytes) -> None:
    """Replace `path` with `text` encoded like the original, all or nothing."""
    data = encode_source(text, original)
    current = path.read_bytes()
    if current != original_bytes:
        raise WriteRefused(f"{path}: changed on disk while torchlint was fixing it; not overwritten")
    mode = path.stat().st_mode
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".torchlint", dir=str(path.parent))
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise
