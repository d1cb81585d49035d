"""What one parsed file offers the rules: the module, its names, its loops, positions, edits.

Built once per file by the engine and shared by every rule.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from torchlint.loops import Site, TrainingLoop, find_training_loops
from torchlint.model import Edit
from torchlint.names import ModuleNames
from torchlint.text import split_lines


class FileContext:
    def __init__(self, path: str, source: str, module: cst.Module) -> None:
        self.path = path
        self.source = source
        self.module = module
        self.lines: List[str] = split_lines(source)
        self.newline = module.default_newline
        self.names = ModuleNames(module)
        self.loops: List[TrainingLoop] = find_training_loops(module, self.names)
        self._positions = None

    # --- positions -----------------------------------------------------------------

    @property
    def positions(self):
        if self._positions is None:
            wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
            self._positions = wrapper.resolve(PositionProvider)
        return self._positions

    def span(self, node: cst.CSTNode) -> Tuple[int, int, int, int]:
        """(line, column, end_line, end_column), 1-based columns, end exclusive."""
        code_range = self.positions[node]
        return (code_range.start.line, code_range.start.column + 1, code_range.end.line, code_range.end.column + 1)

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def indent_of(self, node: cst.CSTNode) -> str:
        line = self.lines[self.positions[node].start.line - 1]
        return line[: len(line) - len(line.lstrip(" \t"))]

    # --- edits ---------------------------------------------------------------------

    def replace(self, node: cst.CSTNode, content: str) -> Edit:
        """Replace an expression, the parentheses around it included."""
        line, column, end_line, end_column = self.span(node)
        lpar, rpar = getattr(node, "lpar", ()), getattr(node, "rpar", ())
        if lpar and rpar:
            line, column = self.span(lpar[0])[:2]
            end_line, end_column = self.span(rpar[-1])[2:]
        return Edit(line, column, end_line, end_column, content)

    def delete_lines(self, node: cst.CSTNode) -> Edit:
        """Remove the whole lines `node` spans, its trailing comment and newline included."""
        line, _, end_line, _ = self.span(node)
        return Edit(line, 1, end_line + 1, 1, "")

    def insert_line_before(self, node: cst.CSTNode, text: str) -> Edit:
        line = self.span(node)[0]
        return Edit(line, 1, line, 1, f"{self.indent_of(node)}{text}{self.newline}")

    def insert_line_after(self, node: cst.CSTNode, text: str, indent: Optional[str] = None) -> Edit:
        """A new line after the last line of `node`, indented like `node` unless told."""
        end_line = self.span(node)[2]
        indent = self.indent_of(node) if indent is None else indent
        if end_line >= len(self.lines) and not self.lines[-1].endswith(("\n", "\r")):
            last = self.lines[-1]
            return Edit(end_line, len(last) + 1, end_line, len(last) + 1, f"{self.newline}{indent}{text}")
        return Edit(end_line + 1, 1, end_line + 1, 1, f"{indent}{text}{self.newline}")

    def last_line_of(self, node: cst.CSTNode) -> int:
        return self.span(node)[2]

    def site_line(self, site: Site) -> int:
        return self.span(site.node)[0]
