"""Re-parse only what an edit touched: for the language server, where one document is linted again and again.

A keystroke changes one or two module-level statements; parsing the whole
document again costs most of a lint. `IncrementalParser` keeps the last
document's LibCST module, finds the module-level statements the changed lines
fall in, parses just those lines, and splices the new statements between the
old, unchanged ones (LibCST nodes are immutable, so sharing them is safe).

The result must be exactly what a full parse gives, so anything unusual falls
back to one: edits in the header, before the first indented block (which
fixes the indentation LibCST assumes), in comments that would change owner
between statements, text that does not parse, or a statement count that
disagrees with CPython's tree of the new text. tests/test_incremental.py
compares spliced and full parses over random edits.
"""

from __future__ import annotations

from typing import List, Optional, Sequence

import libcst as cst

from torchlint.parse import parse_module
from torchlint.text import split_lines


class IncrementalParser:
    """`parse(text, statement_lines)` for successive versions of one document."""

    def __init__(self) -> None:
        self._lines: Optional[List[str]] = None
        self._module: Optional[cst.Module] = None
        self._starts: Optional[List[int]] = None  # first line (1-based, leading comments included) of each statement
        self.spliced = False  # whether the last parse reused the previous module (for tests)

    def parse(self, text: str, statement_lines: Optional[Sequence[int]] = None) -> cst.Module:
        """The module of `text` (raises `cst.ParserSyntaxError` like `cst.parse_module`).

        `statement_lines`: the first line of each module-level statement of `text`, from
        CPython's tree; without it nothing is reused (there would be nothing to check against).
        """
        lines = split_lines(text)
        module = self._splice(lines, statement_lines) if statement_lines is not None else None
        self.spliced = module is not None
        if module is None:
            self._module = None
            module = parse_module(text)
        self._remember(lines, module, statement_lines)
        return module

    def _remember(self, lines: List[str], module: cst.Module, statement_lines: Optional[Sequence[int]]) -> None:
        if statement_lines is None or len(statement_lines) != len(module.body):
            self._lines = self._module = self._starts = None
            return
        self._lines, self._module = lines, module
        self._starts = [line - len(getattr(statement, "leading_lines", ()))
                        for statement, line in zip(module.body, statement_lines)]

    def _splice(self, lines: List[str], statement_lines: Sequence[int]) -> Optional[cst.Module]:
        old_lines, old, starts = self._lines, self._module, self._starts
        if old is None or old_lines is None or starts is None or not starts:
            return None
        prefix = 0
        limit = min(len(old_lines), len(lines))
        while prefix < limit and old_lines[prefix] == lines[prefix]:
            prefix += 1
        if prefix == len(old_lines) == len(lines):
            return old  # unchanged
        suffix = 0
        while (suffix < limit - prefix and old_lines[len(old_lines) - 1 - suffix] == lines[len(lines) - 1 - suffix]):
            suffix += 1
        first_changed = prefix + 1  # 1-based, in both texts
        last_changed = max(len(old_lines) - suffix, first_changed)  # in the old text
        if first_changed < starts[0]:
            return None  # the module header
        first = max(index for index, start in enumerate(starts) if start <= first_changed)
        last = max(index for index, start in enumerate(starts) if start <= last_changed)
        if first <= _first_indented(old):
            return None  # LibCST takes the file's indentation from its first indented block
        at_end = last == len(starts) - 1
        delta = len(lines) - len(old_lines)
        begin = starts[first] - 1  # 0-based line index, same in both texts
        end = len(lines) if at_end else starts[last + 1] - 1 + delta
        if end <= begin:
            return None
        try:
            region = parse_module("".join(lines[begin:end]))
        except (cst.ParserSyntaxError, RecursionError):
            return None
        if not region.body or (region.default_indent, region.default_newline) != (old.default_indent,
                                                                                   old.default_newline):
            return None  # LibCST records each block's indentation relative to the one it detected
        first_code = lines[begin + len(region.header)] if begin + len(region.header) < end else ""
        if first_code[:1] in (" ", "\t", "\f"):
            return None  # indented: in the whole text it continues the block above the region
        statements = list(region.body)
        if region.header:
            # A full parse gives blank lines and comments before a statement to that statement, unless they
            # are indented (then they may close the block above); parsed alone they are the module's header.
            if not _plain(lines[begin:begin + len(region.header)]):
                return None
            statements[0] = statements[0].with_changes(
                leading_lines=tuple(region.header) + tuple(statements[0].leading_lines))
        following = list(old.body[last + 1:])
        if region.footer and not at_end:
            if not _plain(lines[end - len(region.footer):end]):
                return None
            following[0] = following[0].with_changes(
                leading_lines=tuple(region.footer) + tuple(following[0].leading_lines))
        body = tuple(old.body[:first]) + tuple(statements) + tuple(following)
        if len(body) != len(statement_lines):
            return None
        if at_end:
            return old.with_changes(body=body, footer=region.footer, has_trailing_newline=region.has_trailing_newline)
        return old.with_changes(body=body)


def _plain(lines: Sequence[str]) -> bool:
    """Only empty lines and comments that start in the first column."""
    return all(line.startswith("#") or not line.rstrip("\r\n") for line in lines)


def _first_indented(module: cst.Module) -> int:
    """The index of the first module-level statement with an indented block (past the end if none)."""
    for index, statement in enumerate(module.body):
        if isinstance(getattr(statement, "body", None), cst.IndentedBlock):
            return index
    return len(module.body)
