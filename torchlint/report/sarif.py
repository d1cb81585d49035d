"""SARIF 2.1.0 for code scanning: rule metadata (with help text and links), results and fixes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Optional, Sequence

from torchlint import __version__
from torchlint.model import Diagnostic
from torchlint.registry import project_url, rule_urls

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _uri(path: str) -> str:
    return Path(path).as_posix()


def _region(line: int, column: int, end_line: int, end_column: int) -> dict:
    return {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}


def _descriptor(code: str, name: str, summary: str, page: str, level: str, fix: str, url: Optional[str]) -> dict:
    """A rule's metadata, its page (`torchlint rule CODE`) as help, and its web page when the package names one."""
    first_paragraph = page.split("## What it does", 1)[-1].split("##", 1)[0].strip()
    descriptor = {
        "id": code,
        "name": name,
        "shortDescription": {"text": summary},
        "fullDescription": {"text": " ".join(first_paragraph.split())},
        "helpUri": url,
        "help": {"text": page, "markdown": page},
        "defaultConfiguration": {"level": level},
        "properties": {"fix": fix, "tags": ["pytorch", "correctness"]},
    }
    return {key: value for key, value in descriptor.items() if value is not None}


def _rule_descriptor(rule, url: Optional[str]) -> dict:
    from torchlint.docs import rule_markdown

    return _descriptor(rule.code, rule.name, rule.summary, rule_markdown(rule),
                       "error" if rule.severity == "error" else "warning", rule.fix_applicability() or "none", url)


def render_sarif(diagnostics: Sequence[Diagnostic], sources: Dict[str, str], colour: bool) -> str:
    from torchlint.docs import SYNTAX_ERROR_DOC
    from torchlint.rules import ALL_RULES, SYNTAX_ERROR

    urls = rule_urls()
    descriptors = [_rule_descriptor(rule, urls.get(rule.code)) for rule in ALL_RULES]
    descriptors.append(_descriptor(*SYNTAX_ERROR, "the file does not parse", SYNTAX_ERROR_DOC, "error", "none",
                                   urls.get(SYNTAX_ERROR[0])))
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
    driver = {"name": "torchlint", "version": __version__, "informationUri": project_url("Repository"),
              "rules": descriptors}
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {key: value for key, value in driver.items() if value is not None}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
