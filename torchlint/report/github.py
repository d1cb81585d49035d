"""GitHub Actions workflow commands: each finding annotates the pull request's diff."""

from __future__ import annotations

from typing import Dict, Sequence

from torchlint.model import Diagnostic


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(diagnostics: Sequence[Diagnostic], sources: Dict[str, str], colour: bool) -> str:
    lines = []
    for d in diagnostics:
        command = "error" if d.severity == "error" else "warning"
        properties = ",".join(
            f"{key}={_escape_property(str(value))}"
            for key, value in (
                ("title", f"torchlint ({d.code} {d.name})"),
                ("file", d.path),
                ("line", d.line),
                ("col", d.column),
                ("endLine", d.end_line),
                ("endColumn", d.end_column),
            )
        )
        lines.append(f"::{command} {properties}::{_escape_data(f'{d.code} {d.message}')}\n")
    return "".join(lines)
