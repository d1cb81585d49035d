"""Reporters: render diagnostics as `full`, `concise`, `json`, `sarif` or `github` text.

Each reporter is a function `(diagnostics, sources, colour) -> str`; `sources`
maps a path to its text, for code frames.
"""

from __future__ import annotations

import json as _json  # `json` in this package is the JSON reporter module
from collections import Counter
from typing import Callable, Dict, Sequence

from torchlint.model import Diagnostic
from torchlint.report.concise import render_concise
from torchlint.report.full import render_full
from torchlint.report.github import render_github
from torchlint.report.json import render_json
from torchlint.report.sarif import render_sarif

Reporter = Callable[[Sequence[Diagnostic], Dict[str, str], bool], str]

REPORTERS: Dict[str, Reporter] = {
    "full": render_full,
    "concise": render_concise,
    "json": render_json,
    "sarif": render_sarif,
    "github": render_github,
}
# Formats read by programs: no summary line after them.
MACHINE_FORMATS = frozenset({"json", "sarif"})


def render_statistics(diagnostics: Sequence[Diagnostic], as_json: bool = False) -> str:
    """One line per rule: how many findings, and whether `--fix` repairs them."""
    counts = Counter((d.code, d.name) for d in diagnostics)
    fixable = {d.code for d in diagnostics if d.fixable()}
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0][0]))
    if as_json:
        return _json.dumps(
            [{"code": code, "name": name, "count": count, "fixable": code in fixable} for (code, name), count in rows],
            indent=2,
        ) + "\n"
    width = max((len(str(count)) for _, count in rows), default=1)
    return "".join(
        f"{count:>{width}}  {code}  {'[*]' if code in fixable else '   '} {name}\n" for (code, name), count in rows
    )
