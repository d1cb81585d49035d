"""A JSON list of findings, the shape SPEC.md fixes (1-based lines and columns)."""

from __future__ import annotations

import json
from typing import Dict, Sequence

from torchlint.model import Diagnostic


def render_json(diagnostics: Sequence[Diagnostic], sources: Dict[str, str], colour: bool) -> str:
    return json.dumps([d.to_json() for d in diagnostics], indent=2, ensure_ascii=False) + "\n"
