"""SARIF 2.1.0 for code scanning: rule metadata (with help text and links), results and fixes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Dict, Sequence

from torchlint import __version__
from torchlint.model import Diagnostic

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _uri(path: str) -> str:
    return Path(path).as_posix()


def _region(line: int, column: int, end_line: int, end_column: int) -> dict:
    return {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}


def _rule_descriptor(rule) -> dict:
    from torchlint.docs import rule_markdown

    doc = sys.modules[rule.__module__].__doc__ or ""
    first_paragraph = doc.split("## What it does", 1)[-1].split("##", 1)[0].strip()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": " ".join(first_paragraph.split())},
        "helpUri": rule.url(),
        "help": {"text": rule_markdown(rule), "markdown": rule_markdown(rule)},
        "defaultConfiguration": {"level": "error" if rule.severity == "error" else "warning"},
        "properties": {"fix": rule.fix_applicability() or "none", "tags": ["pytorch", "correctness"]},
    }


def render_sarif(diagnostics: Sequence[Diagnostic], sources: Dict[str, str], colour: bool) -> str:
    from torchlint.rules import ALL_RULES, SYNTAX_ERROR

    descriptors = [_rule_descriptor(rule) for rule in ALL_RULES]
    descriptors.append({
        "id": SYNTAX_ERROR[0],
        "name": SYNTAX_ERROR[1],
        "shortDescription": {"text": "the file does not parse"},
        "defaultConfiguration": {"level": "error"},
    })
    index = {descriptor["id"]: position for position, descriptor in enumerate(descriptors)}
    results = []
    for d in diagnostics:
        result = {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": "error" if d.severity == "error" else "warning",
            "message": {"text": d.message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(d.path)},
                    "region": _region(d.line, d.column, d.end_line, d.end_column),
                }
            }],
        }
        if d.fix is not None:
            result["fixes"] = [{
                "description": {"text": f"{d.fix.message} ({d.fix.applicability})"},
                "artifactChanges": [{
                    "artifactLocation": {"uri": _uri(d.path)},
                    "replacements": [
                        {
                            "deletedRegion": _region(e.line, e.column, e.end_line, e.end_column),
                            "insertedContent": {"text": e.content},
                        }
                        for e in d.fix.edits
                    ],
                }],
            }]
        results.append(result)
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "torchlint",
                "version": __version__,
                "informationUri": "https://github.com/torchlint/torchlint",
                "rules": descriptors,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
