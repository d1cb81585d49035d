"""Reporters: render diagnostics as `full`, `concise` or `json` text.

Each reporter is a function `(diagnostics, sources, colour) -> str`; `sources`
maps a path to its text, for code frames.
"""

from __future__ import annotations

from typing import Callable, Dict, Sequence

from torchlint.model import Diagnostic
from torchlint.report.concise import render_concise
from torchlint.report.full import render_full
from torchlint.report.json import render_json

Reporter = Callable[[Sequence[Diagnostic], Dict[str, str], bool], str]

REPORTERS: Dict[str, Reporter] = {
    "full": render_full,
    "concise": render_concise,
    "json": render_json,
}
