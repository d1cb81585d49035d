"""The values that flow from rules to fixer and reporters.

Positions are 1-based lines and 1-based columns (counted in characters), as
they appear in the JSON output; an end position is exclusive.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Tuple

SAFE = "safe"
UNSAFE = "unsafe"

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True, order=True)
class Edit:
    """Replace the text between two positions with `content`."""

    line: int
    column: int
    end_line: int
    end_column: int
    content: str

    def to_json(self) -> dict:
        return {
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "content": self.content,
        }


@dataclass(frozen=True)
class Fix:
    """A repair: edits applied together, or not at all."""

    applicability: str
    message: str
    edits: Tuple[Edit, ...]

    @property
    def is_safe(self) -> bool:
        return self.applicability == SAFE

    def to_json(self) -> dict:
        return {
            "applicability": self.applicability,
            "message": self.message,
            "edits": [edit.to_json() for edit in self.edits],
        }


@dataclass(frozen=True)
class Diagnostic:
    """One finding, at the place a person would fix it."""

    code: str
    name: str
    severity: str
    message: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    fix: Optional[Fix] = None
    cell: Optional[int] = field(default=None, compare=False)
    # Accumulation findings: what the loop does on a concrete run, and what it should do (two lines).
    timeline: Optional[str] = field(default=None, compare=False)

    def to_json(self) -> dict:
        data = {
            "code": self.code,
            "name": self.name,
            "severity": self.severity,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "fix": self.fix.to_json() if self.fix else None,
            "timeline": self.timeline,
        }
        if self.cell is not None:
            data["cell"] = self.cell
        return data

    @classmethod
    def from_json(cls, data: dict, path: str) -> "Diagnostic":
        """The inverse of `to_json`, reported under `path` (the cache stores findings without one)."""
        fix = data.get("fix")
        if fix is not None:
            edits = tuple(Edit(e["line"], e["column"], e["end_line"], e["end_column"], e["content"])
                          for e in fix["edits"])
            fix = Fix(fix["applicability"], fix["message"], edits)
        return cls(data["code"], data["name"], data["severity"], data["message"], path, int(data["line"]),
                   int(data["column"]), int(data["end_line"]), int(data["end_column"]), fix, data.get("cell"),
                   data.get("timeline"))

    def fixable(self, unsafe: bool = False) -> bool:
        return self.fix is not None and (unsafe or self.fix.is_safe)
