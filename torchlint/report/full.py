"""The default output: location, message, a code frame with a caret, the fix hint and where the rule's
documentation is: `torchlint rule TL003`, which works offline and needs no link that may go nowhere."""

from __future__ import annotations

from typing import Dict, List, Sequence

from torchlint.model import Diagnostic
from torchlint.report.concise import fix_marker, location, source_key
from torchlint.text import split_lines

_STYLES = {"bold": "1", "red": "31", "yellow": "33", "cyan": "36", "blue": "34", "dim": "2"}


def _paint(text: str, style: str, colour: bool) -> str:
    if not colour:
        return text
    codes = ";".join(_STYLES[part] for part in style.split())
    return f"\x1b[{codes}m{text}\x1b[0m"


def render_full(diagnostics: Sequence[Diagnostic], sources: Dict[str, str], colour: bool) -> str:
    blocks: List[str] = []
    for d in diagnostics:
        severity_style = "bold red" if d.severity == "error" else "bold yellow"
        head = (
            f"{_paint(location(d), 'bold', colour)}: {_paint(d.code, severity_style, colour)} "
            f"{fix_marker(d)}{d.message}"
        )
        lines = [head]
        source_lines = split_lines(sources.get(source_key(d), ""))
        lines.extend(_frame(d, source_lines, colour))
        if d.timeline:
            first, *rest = d.timeline.split("\n")
            lines.append(f"  {_paint('=', 'cyan', colour)} {_paint(first, 'cyan', colour)}")
            lines.extend(f"    {_paint(line, 'cyan', colour)}" for line in rest)
        if d.fix is not None:
            how = "--fix" if d.fix.is_safe else "--unsafe-fixes"
            lines.append(f"  {_paint('= help:', 'cyan', colour)} {d.fix.message} (fixable with {how})")
        lines.append(f"  {_paint('= docs:', 'dim', colour)} torchlint rule {d.code}")
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def _frame(d: Diagnostic, source_lines: List[str], colour: bool) -> List[str]:
    if not source_lines or d.line > len(source_lines):
        return []
    first = max(1, d.line - 2)
    last = min(len(source_lines), max(d.line, min(d.end_line, d.line + 3)))
    width = len(str(last))
    gutter = _paint(" " * width + " |", "blue", colour)
    out = [gutter]
    for number in range(first, last + 1):
        text = source_lines[number - 1].rstrip("\r\n").expandtabs(4)
        out.append(f"{_paint(str(number).rjust(width) + ' |', 'blue', colour)} {text}")
        if number == d.line:
            start = d.column - 1
            end = d.end_column - 1 if d.end_line == d.line else len(text)
            caret = " " * start + "^" * max(1, end - start)
            out.append(f"{gutter} {_paint(caret, 'bold red' if d.severity == 'error' else 'bold yellow', colour)}")
            if d.end_line == d.line:
                break
    out.append(gutter)
    return out
