"""Jupyter notebooks as one Python program: read, map findings back to cells, write fixes back.

A notebook (`.ipynb`, nbformat 4) is linted as one program made of its code
cells in order. This module is a pure adapter between the notebook's JSON
text and that program; it imports neither libcst nor torch.

- `read_notebook(text)` builds the program (`Notebook.source`). Cells are
  separated by one marker comment line (`# torchlint: cell K`, before code
  cell K >= 2) so statements of two cells never merge, and so the cell
  structure can be found again after fixes. IPython syntax the Python parser
  would reject (`%magic`, `%%cell_magic` cells, `!shell`, `?help`/`obj?`,
  `x = !cmd`, autocall `/f`, `,f`, `;f`) is masked line for line: a masked
  line becomes a comment at the same indentation, or `pass` when it is the
  first statement of a block (`for x in y:` followed by `    %time f(x)`),
  so line numbers never move and the surrounding code keeps its meaning.
  Magic escapes are recognised only where IPython recognises them, at the
  start of a logical line: `% 2` continuing a bracketed expression and `!`
  inside a triple-quoted string are Python and stay as they are.
- A code cell that is not Python is masked whole (every line a comment), so
  it is not linted: a cell under a cell magic whose body is another language
  or not code (`%%bash`, `%%writefile`, `%%html`, `%%sql`; only `%%time`,
  `%%timeit`, `%%capture`, `%%prun`, `%%debug` and `%%memit` run their body
  as Python, which is linted), and a cell whose metadata gives it another
  language (VS Code's `vscode.languageId`, .NET Interactive's
  `dotnet_interactive.language`, Polyglot Notebooks'
  `polyglot_notebook.kernelName`). A notebook whose kernel runs another
  language (`Notebook.is_python`) is not linted at all.
- A code cell that does not parse on its own (pasted log output, a pasted
  traceback, a half-written cell) is masked whole too, when the caller passes
  `syntax_error`: its error is kept on the cell (`CodeCell.syntax_error`, in
  the cell's lines) for the caller to report, and the other cells are linted
  as one program without it, as Jupyter runs each cell on its own.
- `map_diagnostic(notebook, diagnostic)` turns a finding on the program into
  one on a cell: `cell` is the 1-based code-cell number, lines are lines of
  that cell (columns never change).
- `write_back(notebook, fixed_source)` splits a fixed program at the markers,
  restores the masked lines and splices each changed cell's `source` into
  the original JSON text: outputs, metadata, execution counts, other cells,
  key order, indentation, escapes and the final newline stay byte for byte.
  A cell keeps its `source` form (a list of lines or one string).
  `fixed_cells(notebook, fixed_source)` is the same split and restoration
  without the JSON: each code cell's new source, for the language server,
  which edits a notebook's cells as documents of their own.
"""

from __future__ import annotations

import difflib
import itertools
import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from torchlint.model import Diagnostic, Edit, Fix
from torchlint.text import split_lines

__all__ = ["CodeCell", "Notebook", "NotebookError", "code_text", "fixed_cells", "map_diagnostic", "read_notebook",
           "write_back"]

_CELL_MARKER = "# torchlint: cell {number}"
_CELL_MARKER_RE = re.compile(r"# torchlint: cell (\d+)")
_MASK = "# torchlint: masked magic {id}"
_MASK_RE = re.compile(r"(?P<indent>[ \t]*)(?:pass  )?# torchlint: masked magic (?P<id>\d+)[ \t]*")
# `x = !ls`, `files = %sx ls`: IPython's assignment forms of shell and line magics.
_MAGIC_ASSIGNMENT = re.compile(r"[\w.,\[\]()* \t]+=[ \t]*[!%]")
# `obj?`, `obj.attr??`: IPython's help suffix.
_HELP_SUFFIX = re.compile(r"[^\s#?'\"]+\?{1,2}")
_ESCAPES = ("%", "!", "?", "/", ",", ";")
# What Python takes for a blank line (`str.strip()` would also take a no-break space, which it rejects).
_BLANK = " \t\x0c"
_PYTHON_LANGUAGES = frozenset({"python", "python3", "ipython", "ipython3"})
# Cell magics that run their body as Python in the notebook's namespace (IPython's, and memory_profiler's
# `%%memit`): the body is linted. Any other (`%%bash`, `%%writefile`, `%%html`, `%%sql`, `%%R`, `%%script`,
# `%%python3` in a subprocess...) makes the cell not Python for the program.
PYTHON_CELL_MAGICS = frozenset({"capture", "debug", "memit", "prun", "time", "timeit"})
# IPython's automagic: a cell of one line that starts with the name of a line magic or a shell alias, then
# what Python cannot take after a name (`pip install torchviz`, `cd data`, `ls -la`), runs as `%pip install
# torchviz`. IPython applies it only to a cell of a single line, and not to a name the session has bound.
_AUTOMAGIC_NAMES = frozenset({
    "alias", "autoreload", "bookmark", "cat", "cd", "clear", "colors", "conda", "config", "cp", "dhist", "env",
    "history", "less", "load_ext", "ls", "lsmagic", "mamba", "man", "matplotlib", "micromamba", "mkdir", "mv",
    "pip", "popd", "pushd", "pwd", "pylab", "reload_ext", "rm", "rmdir", "run", "sx", "system", "who", "whos",
})
_AUTOMAGIC = re.compile(r"(?P<name>[A-Za-z_]\w*)[ \t]+(?P<rest>\S.*)")
# After a magic's name, these start Python (`pip = 1`, `cd == x`, `run(x)`, `ls[0]`): IPython leaves the line.
_PYTHON_AFTER_NAME = tuple("=([.,:;+*/%<>&|^@!") + ("if ", "else ", "and ", "or ", "in ", "is ", "not ", "for ")
_CELL_MAGIC = re.compile(r"%%([A-Za-z_][\w.]*)")
# Where a cell's metadata names its language: VS Code, .NET Interactive, Polyglot Notebooks.
_CELL_LANGUAGE_FIELDS = (("vscode", "languageId"), ("dotnet_interactive", "language"),
                         ("polyglot_notebook", "kernelName"))
# `syntax_error` of `read_notebook`: a cell's code -> None, or (message, line, column) of its syntax error.
SyntaxCheck = Callable[[str], Optional[Tuple[Optional[str], int, int]]]  # message None: Python runs it, LibCST cannot read it


class NotebookError(Exception):
    """The text is not a notebook torchlint can read, or fixed code cannot go back into its cells."""


@dataclass(frozen=True)
class CodeCell:
    """One code cell: where it is in the JSON and in the program."""

    number: int  # 1-based among code cells: the `cell` of findings
    index: int  # position in the notebook's `cells` list
    id: Optional[str]  # the cell's nbformat 4.5 `id`, if it has one
    text: str  # the cell's source as one string
    as_list: bool  # `source` was a list of lines (written back as one)
    first_line: int  # 1-based line of the program holding the cell's first line
    line_count: int  # lines the cell occupies in the program
    masked: Tuple[Tuple[int, str], ...]  # (mask id, original line without its line break)
    added_newline: bool  # the program adds a line break the cell's last line lacks
    spans: "_SourceSpans" = field(compare=False, repr=False)  # the notebook's, read when `span` is first asked
    # False when the whole cell is masked: another language, or it does not parse (`syntax_error`).
    linted: bool = True
    syntax_error: Optional[Tuple[str, int, int]] = None  # (message, line in cell, column) when it does not parse
    # IPython's leading indent: removed from every line of the program when the cell's first line that is not
    # blank is indented (IPython runs `  x = 1` as `x = 1`); put back on the cell's lines by a fix.
    dedent: str = ""

    @property
    def span(self) -> Tuple[int, int]:
        """Where the cell's `source` value lies in the JSON text."""
        return self.spans.of(self.index)


class _SourceSpans:
    """Where each cell's `source` value lies in a notebook's JSON text: found when a fix writes a cell back, the
    only use, since finding them decodes every value of every cell again (outputs too)."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._spans: Optional[Dict[int, Tuple[int, int]]] = None

    def of(self, index: int) -> Tuple[int, int]:
        if self._spans is None:
            self._spans = _source_spans(self._text)
        return self._spans[index]


@dataclass(frozen=True)
class Notebook:
    """A parsed notebook and the Python program made of its code cells.

    `line_map[i]` is `(cell number, line in cell)` for line `i + 1` of
    `source`, or None for a marker line between two cells.
    """

    text: str
    data: Dict[str, Any]
    source: str
    cells: Tuple[CodeCell, ...]
    line_map: Tuple[Optional[Tuple[int, int]], ...]
    language: Optional[str] = None  # the kernel's language, when the notebook names it

    @property
    def is_python(self) -> bool:
        """False when the notebook says its kernel runs another language (R, Julia...)."""
        return self.language is None or _is_python_language(self.language)

    def cell(self, number: int) -> CodeCell:
        return self.cells[number - 1]


def read_notebook(text: str, syntax_error: Optional[SyntaxCheck] = None) -> Notebook:
    """Parse notebook JSON text and build the program of its code cells; NotebookError if it is not one.

    `syntax_error(cell_program)`: None when one cell's code (its magics masked) parses on its own, else
    `(message, line, column)`; such a cell is left out of the program (masked whole). Without it, every
    Python cell is kept, and a cell that does not parse makes the whole program fail to parse.
    """
    data, sources = _code_sources(text)
    spans = _SourceSpans(text)

    pieces: List[str] = []
    line_map: List[Optional[Tuple[int, int]]] = []
    code_cells: List[CodeCell] = []
    mask_ids = itertools.count(1)
    for index, cell, cell_text, as_list in sources:
        number = len(code_cells) + 1
        if number > 1:
            pieces.append(_CELL_MARKER.format(number=number) + "\n")
            line_map.append(None)
        lines = split_lines(cell_text)
        added_newline = bool(lines) and not lines[-1].endswith(("\n", "\r"))
        if added_newline:
            lines[-1] += "\n"
        dedent = _leading_indent(lines)
        if dedent:
            lines = _without_indent(lines, dedent)
        linted, error = _is_python_cell(cell, lines), None
        if linted:
            program_lines, masked = _mask(lines, mask_ids)
            error = syntax_error("".join(program_lines)) if syntax_error is not None else None
            linted = error is None
        if not linted:
            program_lines, masked = _mask_whole(lines, mask_ids)
        code_cells.append(CodeCell(number, index, cell.get("id") if isinstance(cell.get("id"), str) else None,
                                   cell_text, as_list, len(line_map) + 1, len(lines), tuple(masked),
                                   added_newline, spans, linted, error, dedent))
        pieces.extend(program_lines)
        line_map.extend((number, line) for line in range(1, len(lines) + 1))
    return Notebook(text, data, "".join(pieces), tuple(code_cells), tuple(line_map), _language(data))


def code_text(text: str) -> str:
    """The code cells' sources of notebook JSON `text` as they are, one after another (NotebookError as for
    `read_notebook`). The program `read_notebook` builds holds no word these do not: it only leaves lines
    out (magics, cells of another language), takes indents off, and adds its own marker comments. So a
    word that is not here is not in the program, and this is cheaper to make by far."""
    return "\n".join(cell_text for _, _, cell_text, _ in _code_sources(text)[1])


def _code_sources(text: str) -> Tuple[Dict[str, Any], List[Tuple[int, Dict[str, Any], str, bool]]]:
    """The notebook's JSON data, and (index in `cells`, cell, source as one string, whether `source` was a list
    of lines) for each code cell; NotebookError when `text` is not a notebook."""
    try:
        data = json.loads(text[1:] if text.startswith("\ufeff") else text)
    except json.JSONDecodeError as error:
        raise NotebookError(f"not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})") from None
    except RecursionError:
        raise NotebookError("not valid JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise NotebookError(f"not a Jupyter notebook: the JSON is {_kind(data)}, not an object with a `cells` list")
    cells = data.get("cells")
    if not isinstance(cells, list):
        if "worksheets" in data:
            raise NotebookError("nbformat 3 notebooks are not supported: convert it with "
                                "`jupyter nbconvert --to notebook --nbformat 4`")
        found = "no `cells` key" if cells is None else f"`cells` is {_kind(cells)}"
        raise NotebookError(f"not a Jupyter notebook: {found}, expected a list of cells")
    sources: List[Tuple[int, Dict[str, Any], str, bool]] = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict):
            raise NotebookError(f"not a Jupyter notebook: cell {index + 1} is {_kind(cell)}, not an object")
        if cell.get("cell_type") != "code":
            continue
        where = f"code cell {len(sources) + 1} (cell {index + 1} of the notebook)"
        if "source" not in cell:
            raise NotebookError(f"{where} has no `source`")
        raw = cell["source"]
        if isinstance(raw, list) and all(isinstance(line, str) for line in raw):
            sources.append((index, cell, "".join(raw), True))
        elif isinstance(raw, str):
            sources.append((index, cell, raw, False))
        else:
            raise NotebookError(f"{where}: `source` must be a string or a list of strings, not {_kind(raw)}")
    return data, sources


def map_diagnostic(notebook: Notebook, diagnostic: Diagnostic) -> Diagnostic:
    """The finding with `cell` set and its lines (and its fix's edits) counted within that cell.

    A position on a marker line or past the end means "the end of the cell
    before": line `line_count + 1`, column 1. A fix whose edits reach into
    another cell cannot be described in that cell's lines and is dropped from
    the returned copy (the finding stays).
    """
    if not notebook.cells:
        return diagnostic
    cell, line, column = _locate(notebook, diagnostic.line, diagnostic.column)
    size = notebook.cell(cell).line_count
    if line > size and size:
        # The start of a finding (a syntax error at the end of input) on the cell's last line.
        line, column = size, len(split_lines(notebook.cell(cell).text)[-1].rstrip("\r\n")) + 1
    end_cell, end_line, end_column = _locate(notebook, diagnostic.end_line, diagnostic.end_column)
    if end_cell != cell or (end_line, end_column) < (line, column):
        end_line, end_column = (size + 1, 1) if end_cell > cell else (line, column + 1)
    fix = diagnostic.fix
    if fix is not None:
        edits = []
        for edit in fix.edits:
            start = _locate(notebook, edit.line, edit.column)
            end = _locate(notebook, edit.end_line, edit.end_column)
            if start[0] != cell or end[0] != cell:
                fix = None
                break
            dedent = notebook.cell(cell).dedent
            content = edit.content
            if dedent and edit.column == 1 and (edit.line, edit.column) == (edit.end_line, edit.end_column):
                # Whole lines inserted at a line's start: each gets the cell's leading indent, as `_restore` gives.
                content = "".join(dedent + line if _is_code_line(line) else line for line in split_lines(content))
                edits.append(Edit(start[1], 1, start[1], 1, content))
                continue
            if dedent:
                # Lines an edit writes start after the cell's leading indent, as the line it was cut from did.
                content = content.replace("\n", "\n" + dedent)
            edits.append(Edit(start[1], start[2], end[1], end[2], content))
        else:
            fix = Fix(fix.applicability, fix.message, tuple(edits))
    return replace(diagnostic, cell=cell, line=line, column=column, end_line=end_line, end_column=end_column,
                   fix=fix)


def write_back(notebook: Notebook, fixed_source: str) -> str:
    """The notebook's JSON text with each code cell's source taken from `fixed_source`.

    Only the `source` values of cells whose code changed are rewritten; the
    rest of the text is kept byte for byte. Raises NotebookError when the
    cell structure cannot be recovered (a fix removed, duplicated or moved a
    cell marker or a masked magic line across cells): nothing must be written.
    """
    if fixed_source == notebook.source:
        return notebook.text
    replacements = [(cell, new_text) for cell, new_text in zip(notebook.cells, fixed_cells(notebook, fixed_source))
                    if new_text != cell.text]
    text = notebook.text
    ensure_ascii = _escapes_non_ascii(text)
    for cell, new_text in sorted(replacements, key=lambda item: item[0].span, reverse=True):
        start, end = cell.span
        value = _format_source(text, cell, new_text, ensure_ascii)
        written = json.loads(value)
        if ("".join(written) if isinstance(written, list) else written) != new_text:  # pragma: no cover
            raise NotebookError(f"internal error: cannot write code cell {cell.number} back; "
                                "the notebook was not changed")
        text = text[:start] + value + text[end:]
    return text


def fixed_cells(notebook: Notebook, fixed_source: str) -> List[str]:
    """The source of each code cell (in `notebook.cells` order) once the program is `fixed_source`.

    Masked lines come back as they were and each cell keeps its line breaks and leading indent. Raises
    NotebookError when the cell structure cannot be recovered (see `write_back`) or a fix reached into a
    cell that is not linted.
    """
    texts = []
    for cell, chunk in zip(notebook.cells, _split_cells(notebook, fixed_source)):
        new_text = _restore(cell, chunk)
        if new_text != cell.text and not cell.linted:
            why = "does not parse" if cell.syntax_error is not None else "is not Python"
            raise NotebookError(f"a fix reached into code cell {cell.number}, which {why} and is not linted; "
                                "the notebook was not changed")
        texts.append(new_text)
    return texts


# --- building the program -------------------------------------------------------------------


def _break_of(line: str) -> str:
    return line[len(line.rstrip("\r\n")):]


def _is_python_language(language: str) -> bool:
    return language.strip().lower() in _PYTHON_LANGUAGES


def _is_code_line(line: str) -> bool:
    return bool(line.strip(_BLANK + "\r\n"))


def _leading_indent(lines: List[str]) -> str:
    """The indentation IPython strips from a cell before running it: that of its first line that is not blank.

    IPython removes it from the lines that start with it and leaves the others as they are (` def f():` over
    `    return 1` and a `print(f())` at the margin runs); torchlint reads the cell the same way.
    """
    code = [line for line in lines if _is_code_line(line)]
    if not code:
        return ""
    first = code[0]
    return first[:len(first) - len(first.lstrip(" \t"))]


def _dedented(line: str, dedent: str) -> bool:
    """Whether IPython strips the cell's leading indent `dedent` from this line of it."""
    return bool(dedent) and _is_code_line(line) and line.startswith(dedent)


def _without_indent(lines: List[str], dedent: str) -> List[str]:
    """The cell's lines as IPython runs them: `dedent` taken off the lines that start with it."""
    return [line[len(dedent):] if _dedented(line, dedent) else line for line in lines]


def _is_python_cell(cell: Dict[str, Any], lines: List[str]) -> bool:
    """False when the cell's metadata gives it another language, or a cell magic runs its body as something else.

    A cell magic (`%%name`) is recognised, as IPython does, on the cell's first line that is not blank.
    The body of `%%time` and the like is a cell of its own, which may start with another cell magic.
    """
    metadata = cell.get("metadata")
    if isinstance(metadata, dict):
        for key, field in _CELL_LANGUAGE_FIELDS:
            section = metadata.get(key)
            language = section.get(field) if isinstance(section, dict) else None
            if isinstance(language, str) and language.strip() and not _is_python_language(language):
                return False
    for line in lines:
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("%%"):
            return True
        magic = _CELL_MAGIC.match(stripped)
        if magic is None or magic.group(1) not in PYTHON_CELL_MAGICS:
            return False
    return True


def _mask_whole(lines: List[str], mask_ids: Iterator[int]) -> Tuple[List[str], List[Tuple[int, str]]]:
    """The cell's lines all masked (blank lines kept): a cell that is not linted, and what each mask stands for."""
    out: List[str] = []
    masked: List[Tuple[int, str]] = []
    for line in lines:
        if line.rstrip("\r\n").strip(_BLANK):
            body = line.rstrip("\r\n")
            mask_id = next(mask_ids)
            masked.append((mask_id, body))
            out.append(body[:len(body) - len(body.lstrip(" \t"))] + _MASK.format(id=mask_id) + _break_of(line))
        else:
            out.append(line)
    return out, masked


def _mask(lines: List[str], mask_ids: Iterator[int]) -> Tuple[List[str], List[Tuple[int, str]]]:
    """The cell's lines with IPython-only lines masked, and what each mask stands for.

    A cell magic whose body is Python (`%%time`) is one of those lines: its body is linted.
    """
    out: List[str] = []
    masked: List[Tuple[int, str]] = []

    def mask(line: str, as_pass: bool) -> None:
        body = line.rstrip("\r\n")
        indent = body[:len(body) - len(body.lstrip(" \t"))]
        mask_id = next(mask_ids)
        masked.append((mask_id, body))
        out.append(indent + ("pass  " if as_pass else "") + _MASK.format(id=mask_id) + _break_of(line))

    if len(lines) == 1 and _is_automagic(lines[0]):
        mask(lines[0], False)
        return out, masked
    if not any(_is_magic(line.strip()) for line in lines):
        return list(lines), masked  # nothing to mask, wherever statements start: no need to find where they do
    scanner = _Scanner()
    continued_magic = False
    for line in lines:
        body = line.rstrip("\r\n")
        if continued_magic:
            # A magic or shell line ending in `\` goes on on the next line.
            mask(line, False)
            continued_magic = body.endswith("\\")
            continue
        if scanner.at_statement_start and _is_magic(body.strip()):
            mask(line, scanner.opens_block)
            scanner.opens_block = False
            continued_magic = body.endswith("\\")
            continue
        scanner.feed(body)
        out.append(line)
    return out, masked


def _is_automagic(line: str) -> bool:
    """Whether IPython runs this line, the only one of its cell, as a line magic or shell alias (`_AUTOMAGIC`)."""
    match = _AUTOMAGIC.fullmatch(line.strip())
    return (match is not None and match.group("name") in _AUTOMAGIC_NAMES
            and not match.group("rest").startswith(_PYTHON_AFTER_NAME))


def _is_magic(stripped: str) -> bool:
    return bool(stripped) and (
        stripped.startswith(_ESCAPES)
        or _HELP_SUFFIX.fullmatch(stripped) is not None
        or _MAGIC_ASSIGNMENT.match(stripped) is not None
    )


class _Scanner:
    """Just enough of Python's tokenizer to know where logical lines start.

    Tracks open brackets, open strings (triple-quoted ones span lines),
    backslash continuations, and whether the last logical line ended with
    `:` (so the next statement is the first of a block).
    """

    def __init__(self) -> None:
        self.depth = 0
        self.quote: Optional[str] = None
        self.continued = False
        self.last = ""  # last significant character of the logical line so far
        self.opens_block = False

    @property
    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.quote is None and not self.continued

    def feed(self, line: str) -> None:
        if self.at_statement_start:
            self.last = ""
        i, n, comment, escaped_break = 0, len(line), False, False
        while i < n:
            c = line[i]
            if self.quote is not None:
                if c == "\\":
                    escaped_break = i == n - 1
                    i += 2
                elif line.startswith(self.quote, i):
                    i += len(self.quote)
                    self.quote = None
                    self.last = c
                else:
                    i += 1
                continue
            if c == "#":
                comment = True
                break
            if c in "'\"":
                self.quote = c * 3 if line.startswith(c * 3, i) else c
                i += len(self.quote)
                self.last = c
                continue
            if c in "([{":
                self.depth += 1
            elif c in ")]}":
                self.depth = max(self.depth - 1, 0)
            if not c.isspace():
                self.last = c
            i += 1
        if self.quote is not None and len(self.quote) == 1 and not escaped_break:
            self.quote = None  # an unterminated string: a syntax error the parser will report
        self.continued = self.quote is None and not comment and line.rstrip().endswith("\\")
        if self.at_statement_start and self.last:
            self.opens_block = self.last == ":"


def _language(data: Dict[str, Any]) -> Optional[str]:
    metadata = data.get("metadata")
    if not isinstance(metadata, dict):
        return None
    for key, entry in (("kernelspec", "language"), ("language_info", "name")):
        section = metadata.get(key)
        if isinstance(section, dict) and isinstance(section.get(entry), str):
            return section[entry]
    return None


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"


# --- where each cell's `source` lies in the JSON text ---------------------------------------

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _source_spans(text: str) -> Dict[int, Tuple[int, int]]:
    """{index in `cells`: (start, end) of that cell's `source` value} in `text` (already valid JSON)."""
    spans: Dict[int, Tuple[int, int]] = {}
    top = _members(text, 1 if text.startswith("\ufeff") else 0)
    cells = top.get("cells")
    if cells is None or text[cells[0]] != "[":
        return spans
    for index, start in enumerate(_elements(text, cells[0])):
        if text[start] == "{":
            source = _members(text, start).get("source")
            if source is not None:
                spans[index] = source
    return spans


def _skip(text: str, at: int) -> int:
    return _WHITESPACE.match(text, at).end()


def _value_end(text: str, at: int) -> int:
    return _DECODER.raw_decode(text, at)[1]


def _members(text: str, at: int) -> Dict[str, Tuple[int, int]]:
    """{key: (start, end) of its value} of the object starting at `at` (the last duplicate wins, as in json)."""
    members: Dict[str, Tuple[int, int]] = {}
    at = _skip(text, _skip(text, at) + 1)  # past `{`
    while text[at] != "}":
        key, at = json.decoder.scanstring(text, at + 1)
        at = _skip(text, _skip(text, at) + 1)  # past `:`
        end = _value_end(text, at)
        members[key] = (at, end)
        at = _skip(text, end)
        if text[at] == ",":
            at = _skip(text, at + 1)
    return members


def _elements(text: str, at: int) -> List[int]:
    """Start offsets of the elements of the array starting at `at`."""
    starts = []
    at = _skip(text, at + 1)
    while text[at] != "]":
        starts.append(at)
        at = _skip(text, _value_end(text, at))
        if text[at] == ",":
            at = _skip(text, at + 1)
    return starts


# --- writing back ---------------------------------------------------------------------------


def _split_cells(notebook: Notebook, fixed_source: str) -> List[List[str]]:
    chunks: List[List[str]] = [[]]
    seen = []
    for line in split_lines(fixed_source):
        match = _CELL_MARKER_RE.fullmatch(line.rstrip("\r\n"))
        if match:
            seen.append(int(match.group(1)))
            chunks.append([])
        else:
            chunks[-1].append(line)
    expected = [cell.number for cell in notebook.cells[1:]]
    if seen != expected:
        raise NotebookError("a fix moved or removed the boundary between code cells "
                            f"(expected cell markers {expected}, found {seen}); the notebook was not changed")
    return chunks


def _restore(cell: CodeCell, lines: List[str]) -> str:
    originals = dict(cell.masked)
    found = set()
    out = []
    for line in lines:
        body = line.rstrip("\r\n")
        match = _MASK_RE.fullmatch(body)
        if match is None:
            out.append(line)
            continue
        mask_id = int(match.group("id"))
        if mask_id not in originals or mask_id in found:
            raise NotebookError(f"a fix moved or copied an IPython magic line into code cell {cell.number}; "
                                "the notebook was not changed")
        found.add(mask_id)
        original = originals[mask_id]
        # Re-indented by a fix: keep the new indentation; otherwise this is the original line.
        out.append(match.group("indent") + original.lstrip(" \t") + _break_of(line))
    if found != set(originals):
        missing = next(originals[mask_id] for mask_id, _ in cell.masked if mask_id not in found)
        raise NotebookError(f"a fix removed the IPython line `{missing.strip()}` from code cell {cell.number}; "
                            "the notebook was not changed")
    breaks = {_break_of(line) for line in split_lines(cell.text)} - {""}
    if len(breaks) == 1:
        # A cell written with one kind of line break keeps it on the lines a fix added with another (the
        # program's line break is that of its first line, which may be another cell's).
        (newline,) = breaks
        out = [line[:-len(_break_of(line))] + newline if _break_of(line) not in ("", newline) else line
               for line in out]
    if cell.dedent:
        out = _indent_again(cell, out)
    text = "".join(out)
    if cell.added_newline and text.endswith(("\n", "\r")):
        text = text[:-len(_break_of(text))]
    return text


def _indent_again(cell: CodeCell, lines: List[str]) -> List[str]:
    """The cell's lines with the leading indent IPython strips put back where it was.

    Where every code line of the cell had it, every code line gets it. Otherwise the lines a fix left alone are
    the cell's own again, and a line a fix wrote gets the indent (IPython strips it again, so it runs as written).
    """
    original = split_lines(cell.text)
    if cell.added_newline and original:
        original[-1] += "\n"
    if all(_dedented(line, cell.dedent) for line in original if _is_code_line(line)):
        return [cell.dedent + line if _is_code_line(line) else line for line in lines]
    read = _without_indent(original, cell.dedent)
    out: List[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, read, lines, autojunk=False).get_opcodes():
        if tag == "equal":
            out.extend(original[i1:i2])
        else:
            out.extend(cell.dedent + line if _is_code_line(line) else line for line in lines[j1:j2])
    return out


def _escapes_non_ascii(text: str) -> bool:
    """Whether the file was written with `ensure_ascii=True` (Jupyter writes `False`)."""
    return text.isascii() and re.search(r"\\u(?!00[0-7])[0-9a-fA-F]{4}", text) is not None


def _format_source(text: str, cell: CodeCell, new_text: str, ensure_ascii: bool) -> str:
    """The JSON for a cell's new source, in the same form and layout as the old one."""
    if not cell.as_list:
        return json.dumps(new_text, ensure_ascii=ensure_ascii)
    items = [json.dumps(line, ensure_ascii=ensure_ascii) for line in split_lines(new_text)]
    if not items:
        return "[]"
    start, end = cell.span
    old = _elements(text, start)
    if old:
        opening = text[start + 1:old[0]]
        closing_at = _value_end(text, old[-1])
        closing = text[closing_at:end - 1]
        if len(old) > 1:
            separator = text[_value_end(text, old[0]):old[1]]
        else:
            separator = "," + opening if "\n" in opening else ", "
    else:
        # `"source": []`: indent the items one step deeper than the `"source"` key.
        line_start = text.rfind("\n", 0, start) + 1
        key_line = text[line_start:start]
        indent = key_line[:len(key_line) - len(key_line.lstrip(" \t"))]
        if "\n" not in text[:start] or not key_line.lstrip().startswith('"source"'):
            opening = closing = ""
            separator = ", "
        else:
            step = _indent_step(text)
            opening, closing, separator = "\n" + indent + step, "\n" + indent, ",\n" + indent + step
    return "[" + opening + separator.join(items) + closing + "]"


def _indent_step(text: str) -> str:
    """The indentation of the top object's first key: one level of the file's indentation."""
    match = re.match(r"\ufeff?[ \t\r\n]*\{[ \t]*\r?\n([ \t]*)", text)
    return match.group(1) if match and match.group(1) else " "


def _locate(notebook: Notebook, line: int, column: int) -> Tuple[int, int, int]:
    """(cell, line in cell, column) for a program position; see `map_diagnostic`."""
    line_map = notebook.line_map
    if line < 1:
        return 1, 1, 1
    if line <= len(line_map) and line_map[line - 1] is not None:
        cell, cell_line = line_map[line - 1]
        dedent = notebook.cell(cell).dedent
        if _dedented(split_lines(notebook.cell(cell).text)[cell_line - 1], dedent):
            column += len(dedent)
        return cell, cell_line, column
    if line > len(line_map):
        last = notebook.cells[-1]
        return last.number, last.line_count + 1, 1
    # A marker line: the end of the cell before it.
    before = notebook.cells[_marker_cell(notebook, line) - 2]
    return before.number, before.line_count + 1, 1


def _marker_cell(notebook: Notebook, line: int) -> int:
    for cell in notebook.cells:
        if cell.first_line == line + 1:
            return cell.number
    raise AssertionError(f"line {line} is not a cell marker")  # pragma: no cover
