"""`torchlint lsp`: the linter as a Language Server on stdio (pygls 2.x).

What the editor gets:

- **Diagnostics** for every open Python document (languageId ``python``),
  published on ``didOpen`` and ``didSave`` at once, and on ``didChange`` at
  once after a pause in typing or, while changes keep coming faster than
  `DEBOUNCE_SECONDS`, once they pause for that long (a newer change to the same
  document cancels the pending lint, and a result computed for an older
  version is never published). Successive versions of a document are parsed
  incrementally (`torchlint.incremental`): only the statements an edit touched
  are parsed again. ``didClose`` clears the document's diagnostics. Each
  diagnostic carries ``source="torchlint"``, the rule code (``TL003``), the
  severity, and ``codeDescription.href`` pointing at the rule's documentation.
- **Code actions**: one ``quickfix`` per finding that has a fix (title = the
  fix's message, `` (unsafe)`` appended for unsafe fixes, ``isPreferred`` for
  safe ones), and one ``source.fixAll.torchlint`` action, "Fix all torchlint
  problems", that rewrites the document with every *safe* fix applied to a
  fixpoint (exactly what ``torchlint --fix`` writes). Asked for by kind
  (``editor.codeActionsOnSave``) it comes with its edit; in the light bulb,
  which asks on every cursor move, it comes without one when the client can
  resolve edits (``codeAction/resolve``), so the whole file is fixed only if
  the user picks it.

- **Notebook documents** (LSP 3.17 ``notebookDocument/*``, as VS Code's
  notebook view sends them): declared for Jupyter notebooks
  (``jupyter-notebook``) with Python cells. A notebook's code cells, in
  order, are one program, built exactly as ``torchlint train.ipynb`` builds
  it (`torchlint.engine.notebook_program`: magics masked, cells in another
  language and cells that do not parse left out, each of those with its own
  TL000); markup cells are not part of it. Each finding is published on the
  cell it belongs to (the cell's text document URI), in that cell's lines,
  and every code cell gets a publication on each lint (an empty one clears
  it); a cell that leaves the program (removed, closed, turned into
  markdown) is cleared. Cell edits, added, moved and removed cells and
  metadata changes are linted as a document's edits are (at once after a
  pause, debounced while they keep coming). Code actions are asked with a
  cell's URI: quick fixes edit that cell, and fix-all (also offered as
  ``notebook.source.fixAll.torchlint`` for ``notebook.codeActionsOnSave``)
  edits every cell it changes, giving the cells ``torchlint --fix`` would
  write (`torchlint.notebook.fixed_cells`).

- **Across files**: a document's findings can rest on other files of the project (the ``__call__`` in
  ``util/misc.py`` of the ``loss_scaler`` that ``engine.py``'s loop calls; the ``main.py`` that hands it
  over): those the engine records for the cache (`torchlint.engine.analyse`'s dependencies). The project's
  index reads the open documents' unsaved text in place of the disk's
  (`torchlint.project.index.set_open_text`, dropped on ``didClose``), and is kept between edits: a change
  brings it up to date for the changed file alone (`torchlint.project.index.file_changed`). When an open
  document is edited (debounced like the document itself), saved or closed, or a file changes on disk
  (``workspace/didChangeWatchedFiles``, for which a watcher of ``**/*.py`` is registered when the client
  declares ``dynamicRegistration``), the open documents whose last lint rested on that file, and no other,
  are linted again and their diagnostics republished (a ``window/logMessage`` names them).

Nothing here lints by itself: the rules the file's project configuration
selects come from `torchlint.config.SettingsResolver` (the configuration is
re-read on every lint, so editing ``pyproject.toml`` takes effect on the next
keystroke or save), findings come from `torchlint.engine.lint_source`
(``# noqa`` included) and the fix-all text from `torchlint.fix.fix_source`.
A bad configuration publishes no findings for the files it governs and is
reported once through ``window/showMessage``.

Positions: the engine counts 1-based lines and 1-based columns in Unicode code
points; LSP counts 0-based lines and 0-based characters in the code units of
the position encoding negotiated at ``initialize`` (UTF-16 unless the client
offers UTF-8 or UTF-32). Every position is converted with the text of its own
line, so a character outside the Basic Multilingual Plane (an emoji) before a
finding shifts it by two UTF-16 units (or four UTF-8 bytes), not one.

Linting runs on one worker thread so the event loop keeps reading messages
while a large file is analysed; an exception anywhere in a lint is logged
(``window/logMessage``) and never stops the server.

pygls and lsprotocol are imported only by this module, and this module only by
``torchlint lsp``: the command line stays fast to start. The server answers
``initialize`` as soon as they are imported (about half a second, nearly all of
it lsprotocol's types and converter); LibCST, the rules and the package
metadata with the rules' links are imported afterwards on the lint worker
(`TorchlintLanguageServer.warm_up`), while the editor opens its first document.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import re
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple, Union
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from torchlint import __version__
from torchlint.model import ERROR, Diagnostic

logger = logging.getLogger("torchlint.lsp")

SOURCE = "torchlint"
FIX_ALL_KIND = "source.fixAll.torchlint"
FIX_ALL_TITLE = "Fix all torchlint problems"
# What VS Code asks for on a notebook's save with "notebook.codeActionsOnSave": {"notebook.source.fixAll": ...}.
NOTEBOOK_FIX_ALL_KIND = "notebook.source.fixAll.torchlint"
NOTEBOOK_TYPE = "jupyter-notebook"
DEBOUNCE_SECONDS = 0.15
PYTHON_LANGUAGE_IDS = frozenset({"python"})
NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[types.NotebookDocumentFilterWithNotebook(
        notebook=NOTEBOOK_TYPE, cells=[types.NotebookCellLanguage(language=language)
                                       for language in sorted(PYTHON_LANGUAGE_IDS)])],
    save=True,
)

# LSP line terminators (the ones LibCST counts too): not str.splitlines(), which
# also splits on form feeds, vertical tabs and U+2028.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


# --- positions -------------------------------------------------------------------


def _units_utf16(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _units_utf8(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _units_utf32(text: str) -> int:
    return len(text)


_UNIT_COUNTERS = {
    types.PositionEncodingKind.Utf16: _units_utf16,
    types.PositionEncodingKind.Utf8: _units_utf8,
    types.PositionEncodingKind.Utf32: _units_utf32,
}


class PositionMap:
    """Converts the engine's 1-based code-point positions to LSP positions for one text."""

    def __init__(self, text: str, encoding: Optional[str] = types.PositionEncodingKind.Utf16) -> None:
        self.lines = _LINE_BREAK.split(text)  # without terminators; "a\n" -> ["a", ""]
        self._units = _UNIT_COUNTERS.get(encoding or types.PositionEncodingKind.Utf16, _units_utf16)

    def position(self, line: int, column: int) -> types.Position:
        index = line - 1
        if index < 0:
            return types.Position(line=0, character=0)
        if index >= len(self.lines):  # past the end: the end of the document
            return types.Position(line=len(self.lines) - 1, character=self._units(self.lines[-1]))
        text = self.lines[index]
        return types.Position(line=index, character=self._units(text[: max(column - 1, 0)]))

    def range(self, line: int, column: int, end_line: int, end_column: int) -> types.Range:
        return types.Range(start=self.position(line, column), end=self.position(end_line, end_column))

    def end(self) -> types.Position:
        return types.Position(line=len(self.lines) - 1, character=self._units(self.lines[-1]))


def _before(a: types.Position, b: types.Position) -> bool:
    return (a.line, a.character) < (b.line, b.character)


def _overlaps(a: types.Range, b: types.Range) -> bool:
    """Closed-interval overlap: a cursor (empty range) at either end of a finding counts."""
    return not _before(a.end, b.start) and not _before(b.end, a.start)


def _kind_wanted(kind: str, only: Optional[Sequence[str]]) -> bool:
    """LSP code action kinds are hierarchical: asking for `source` includes `source.fixAll.torchlint`."""
    if not only:
        return True
    return any(kind == wanted or kind.startswith(wanted + ".") for wanted in only)


# --- lint results ----------------------------------------------------------------


@dataclass(frozen=True)
class NotebookCellText:
    """One cell of an open notebook document, as the client last sent it."""

    uri: str  # the cell's text document, as the notebook spells it
    code: bool  # a code cell; markup cells are not part of the program
    language: str
    version: Optional[int]
    text: str


@dataclass(frozen=True)
class NotebookState:
    """An open notebook document: its cells in order, its metadata, and a key that changes with any of them."""

    cells: Tuple[NotebookCellText, ...]
    metadata: Optional[dict]
    # The notebook's version and every cell's (a client need not bump the notebook's on a cell's text edit).
    version: tuple

    @property
    def code_cells(self) -> Tuple[NotebookCellText, ...]:
        """Numbered from 1 like the findings' `Diagnostic.cell`."""
        return tuple(cell for cell in self.cells if cell.code)

    def as_ipynb(self) -> str:
        """The notebook as the `.ipynb` text the client would save, as far as torchlint reads it: each cell's
        kind and source, a code cell's language where the client records it (VS Code's `vscode.languageId`),
        and the notebook's metadata (the kernel's language)."""
        cells = [{"cell_type": "code", "metadata": {"vscode": {"languageId": cell.language}}, "outputs": [],
                  "execution_count": None, "source": cell.text} if cell.code else
                 {"cell_type": "markdown", "metadata": {}, "source": cell.text} for cell in self.cells]
        metadata = self.metadata if isinstance(self.metadata, dict) else {}
        return json.dumps({"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5})


@dataclass
class LintSnapshot:
    """The findings of one version of one document or notebook, in the engine's and the client's terms."""

    uri: str  # the document's, or the notebook's
    version: object  # the document's version; for a notebook, `NotebookState.version`
    text: str  # what was linted: the document, or the notebook's program
    path: str
    rules: Optional[tuple]  # None: the configuration could not be loaded
    findings: List[Tuple[Diagnostic, types.Diagnostic]]
    # {uri: new text} of the documents every safe fix changes (fix_source(...).source), computed on demand
    fixed: Optional[Dict[str, str]] = None
    # (type, message, show) to send from the event loop: the worker thread never writes to the client.
    messages: List[Tuple[types.MessageType, str, bool]] = field(default_factory=list)
    # A notebook's code cells (numbered as `Diagnostic.cell`); None for a document.
    cells: Optional[Tuple[NotebookCellText, ...]] = None
    # A notebook's program (torchlint.engine.Program); None for a document, or a notebook of another language.
    program: Optional[object] = None
    # The other files of the project the findings rest on (`torchlint.engine.analyse`'s dependencies), real paths.
    dependencies: Tuple[str, ...] = ()
    # `TorchlintLanguageServer._world` when the lint was queued: what it read of the other files is as of then.
    world: int = 0

    def documents(self) -> List[Tuple[str, str, Optional[int]]]:
        """(uri, text, version) of each text document the findings are on: the document, or the code cells."""
        if self.cells is None:
            return [(self.uri, self.text, self.version)]
        return [(cell.uri, cell.text, cell.version) for cell in self.cells]

    def document_of(self, diagnostic: Diagnostic) -> Tuple[str, str, Optional[int]]:
        """(uri, text, version) of the document a finding is on: for a notebook, its cell's."""
        if self.cells is None:
            return self.uri, self.text, self.version
        cell = self.cells[(diagnostic.cell or 1) - 1]
        return cell.uri, cell.text, cell.version


def _import_analysis() -> None:
    """Import what linting needs (LibCST and the rules take a quarter of a second; the metadata with the links)."""
    import torchlint.config  # noqa: F401
    import torchlint.engine  # noqa: F401
    import torchlint.incremental  # noqa: F401
    import torchlint.rules  # noqa: F401


_CLOSED = object()
_SEVERITY = {ERROR: types.DiagnosticSeverity.Error}


def to_lsp_diagnostic(diagnostic: Diagnostic, positions: PositionMap, urls: Dict[str, str],
                      uri: Optional[str] = None) -> types.Diagnostic:
    url = urls.get(diagnostic.code)
    where = positions.range(diagnostic.line, diagnostic.column, diagnostic.end_line, diagnostic.end_column)
    related = None
    if diagnostic.timeline and uri is not None:  # what the loop does on a concrete run, next to the message
        related = [types.DiagnosticRelatedInformation(location=types.Location(uri=uri, range=where),
                                                      message=diagnostic.timeline)]
    return types.Diagnostic(
        range=where,
        related_information=related,
        message=diagnostic.message,
        severity=_SEVERITY.get(diagnostic.severity, types.DiagnosticSeverity.Warning),
        code=diagnostic.code,
        code_description=types.CodeDescription(href=url) if url else None,
        source=SOURCE,
    )


def _document_path(uri: str) -> Optional[Path]:
    path = to_fs_path(uri) if uri.startswith("file:") else None
    return Path(path) if path else None


def _real(path: Path) -> str:
    """The path with its links resolved: how a document and a file the facts read are compared."""
    return os.path.realpath(str(path))


def _disk_text(path: Path) -> Optional[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


# --- the server ------------------------------------------------------------------


class TorchlintLanguageServer(LanguageServer):
    def __init__(self, debounce: float = DEBOUNCE_SECONDS) -> None:
        super().__init__("torchlint", __version__, notebook_document_sync=NOTEBOOK_SYNC)
        self.debounce = debounce
        self._urls: Optional[Dict[str, str]] = None  # code -> rule page; on the worker thread, see `warm_up`
        self._open: Set[str] = set()  # Python documents, by uri as the client spells it
        # Open notebooks, by uri as the client spells it: the cells their diagnostics were last published on.
        self._notebooks: Dict[str, Set[str]] = {}
        self._pending: Dict[str, asyncio.Task] = {}
        self._snapshots: Dict[str, LintSnapshot] = {}
        # Used by the worker thread only: uri -> IncrementalParser; notebook uri -> {cell code: its syntax check}.
        self._parsers: Dict[str, object] = {}
        self._cell_checks: Dict[str, Dict[str, object]] = {}
        self._last_change: Dict[str, float] = {}
        self._shown_errors: Set[str] = set()
        # Another file of the project changing: `_world` counts the changes; `_stale[uri]` is the count at which
        # a file the document's last lint rested on changed (an older snapshot of it is not served again).
        self._world = 0
        self._stale: Dict[str, int] = {}
        # uri -> the dependencies of its last lint (kept when its snapshot is forgotten on a save).
        self._dependencies: Dict[str, Tuple[str, ...]] = {}
        # Used by the worker thread only: the paths whose open text the project index reads in place of the disk.
        self._overlaid: Set[str] = set()
        # One worker: lints never race each other, and a queued lint of a version
        # that is no longer current is skipped before it starts.
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="torchlint-lint")

    def warm_up(self) -> None:
        """Import the analysis on the lint worker once `initialize` is answered (the editor waits for nothing
        it does not need), while the client sends `initialized` and opens its first document, whose lint,
        queued behind it on the same worker, then finds everything imported."""
        self._worker.submit(self._rule_links)

    def watch_files(self) -> None:
        """Ask the client to report changes of the workspace's Python files on disk
        (`workspace/didChangeWatchedFiles`), when it can be asked at run time (`dynamicRegistration`)."""
        capabilities = self.client_capabilities
        workspace = capabilities.workspace if capabilities else None
        watched = workspace.did_change_watched_files if workspace else None
        if not (watched and watched.dynamic_registration):
            return
        self.client_register_capability(types.RegistrationParams(registrations=[types.Registration(
            id="torchlint-watched-python-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(
                watchers=[types.FileSystemWatcher(glob_pattern="**/*.py")]))]))

    def _rule_links(self) -> Dict[str, str]:
        """Runs on the worker thread."""
        if self._urls is None:
            from torchlint.registry import rule_urls

            _import_analysis()
            self._urls = rule_urls()
        return self._urls

    # -- documents and notebooks

    def is_python(self, uri: str) -> bool:
        return uri in self._open

    def is_notebook(self, uri: str) -> bool:
        return uri in self._notebooks

    def linted_uri(self, uri: str) -> Optional[str]:
        """What is linted for a text document: itself (a Python document), its notebook (a cell), or None."""
        if uri in self._open:
            return uri
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        return notebook.uri if notebook is not None and notebook.uri in self._notebooks else None

    def open_document(self, uri: str, language_id: str) -> bool:
        if language_id not in PYTHON_LANGUAGE_IDS:
            return False
        self._open.add(uri)
        return True

    # -- what the project's other files read: open documents' unsaved text, and who depends on whom

    def text_changed(self, uri: str, delay: float, opened: bool = False) -> None:
        """An open Python document's text changed (opened, edited): the project index reads it in place of the
        disk (on the worker, before any lint queued after this), and the open documents whose last lint rested
        on the file are linted again after `delay`. A document opened with its disk's text changes nothing."""
        path = _document_path(uri)
        if path is None:
            return
        text = self.current(uri)[0]
        if opened and _disk_text(path) == text:
            self._worker.submit(self._set_open_text, str(path), text)
            return
        self._update_index(path, uri, self._set_open_text, str(path), text)
        self.relint_dependents(path, delay, uri)

    def text_closed(self, uri: str) -> None:
        """An open document was closed: the disk's text counts again for the files that depend on it."""
        path = _document_path(uri)
        if path is not None:
            self._update_index(path, uri, self._set_open_text, str(path), None)
            self.relint_dependents(path, 0, uri)

    def files_changed(self, changes: Sequence[types.FileEvent]) -> None:
        """`workspace/didChangeWatchedFiles`: files changed on disk; those open in the editor are read from
        their open text, and are left as they are."""
        open_paths = {_real(path) for path in map(_document_path, self._open) if path is not None}
        for change in changes:
            path = _document_path(change.uri)
            if path is None or _real(path) in open_paths:
                continue
            listed = change.type in (types.FileChangeType.Created, types.FileChangeType.Deleted)
            self._update_index(path, change.uri, self._file_changed, str(path), listed)
            self.relint_dependents(path, 0, change.uri)

    def _update_index(self, path: Path, uri: str, update, *args) -> None:
        """Run `update` (which tells the project index of a change to the file `path`) on the worker. When the
        file gained or lost a function or method that runs a backward, any open document may now call into
        training, or no longer, though its last lint rested on no such file: all are linted again."""
        future = self._worker.submit(update, *args)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on the server's loop (a direct call): nothing to schedule
            return

        def done(result: asyncio.Future) -> None:
            if not result.cancelled() and result.exception() is None and result.result():
                self.relint_open(path, uri)

        asyncio.wrap_future(future, loop=loop).add_done_callback(done)

    def relint_open(self, path: Path, changed_uri: str) -> List[str]:
        """Lint again every open Python document but `changed_uri`: the file `path` now runs a backward in a
        function or method where it ran none, or the other way round (`torchlint.project.index.file_changed`).
        Returns their URIs."""
        self._world += 1
        others = [uri for uri in sorted(self._open) if uri != changed_uri]
        for uri in others:
            self._stale[uri] = self._world
            self._snapshots.pop(uri, None)
            self.schedule_lint(uri, 0)
        if others:
            message = (f"torchlint: {path.name} changed what runs a backward; linting again: " + ", ".join(others))
            logger.info("%s", message)
            self.window_log_message(types.LogMessageParams(type=types.MessageType.Log, message=message))
        return others

    def relint_dependents(self, path: Path, delay: float, changed_uri: str) -> List[str]:
        """Lint again, after `delay`, every open document whose last lint rested on the file `path` (another
        file of the project its facts read): the others are left alone. Returns their URIs."""
        real = _real(path)
        self._world += 1
        dependents = [uri for uri in sorted(self._open)
                      if uri != changed_uri and real in self._depends_on(uri)]
        for uri in dependents:
            self._stale[uri] = self._world
            self._snapshots.pop(uri, None)
            self.schedule_lint(uri, delay)
        if dependents:
            message = f"torchlint: {path.name} changed; linting again: " + ", ".join(dependents)
            logger.info("%s", message)
            self.window_log_message(types.LogMessageParams(type=types.MessageType.Log, message=message))
        return dependents

    def _depends_on(self, uri: str) -> Tuple[str, ...]:
        return self._dependencies.get(uri, ())

    def _set_open_text(self, path: str, text: Optional[str]) -> bool:
        """Runs on the worker thread; True when the file's carriers changed (`file_changed`)."""
        from torchlint.project.index import file_changed, set_open_text

        if text is None:
            self._overlaid.discard(path)
        else:
            self._overlaid.add(path)
        return set_open_text(path, text) and file_changed(path)

    def _file_changed(self, path: str, listed: bool) -> bool:
        """Runs on the worker thread."""
        from torchlint.project.index import file_changed

        return file_changed(path, listed)

    def open_notebook(self, uri: str) -> None:
        self._notebooks[uri] = set()

    def close_document(self, uri: str) -> None:
        self._open.discard(uri)
        self._forget_document(uri)

    def close_notebook(self, uri: str) -> Set[str]:
        """Forget an open notebook; returns the cells its diagnostics were last published on."""
        published = self._notebooks.pop(uri, set())
        self._forget_document(uri)
        self._worker.submit(self._cell_checks.pop, uri, None)
        return published

    def _forget_document(self, uri: str) -> None:
        self._cancel_pending(uri)
        self._snapshots.pop(uri, None)
        self._dependencies.pop(uri, None)
        self._stale.pop(uri, None)
        self._last_change.pop(uri, None)
        self._worker.submit(self._parsers.pop, uri, None)  # on the worker: a lint may be using it

    def forget_snapshot(self, uri: str) -> None:
        self._snapshots.pop(uri, None)

    def current(self, uri: str) -> Tuple[str, Optional[int]]:
        """The text and version of an open document."""
        document = self.workspace.get_text_document(uri)
        return document.source, document.version

    def notebook_state(self, uri: str) -> Optional[NotebookState]:
        """An open notebook's cells as the client last sent them; None once it is closed."""
        notebook = self.workspace.get_notebook_document(notebook_uri=uri)
        if notebook is None:
            return None
        cells = []
        for cell in notebook.cells:
            try:
                document = self.workspace.get_text_document(cell.document)
                text, language, version = document.source, document.language_id or "", document.version
            except Exception:  # noqa: BLE001 - a cell whose text document the client never opened
                text, language, version = "", "", None
            cells.append(NotebookCellText(cell.document, cell.kind == types.NotebookCellKind.Code, language,
                                          version, text))
        key = (notebook.version, tuple((cell.uri, cell.code, cell.language, cell.version) for cell in cells))
        metadata = notebook.metadata if isinstance(notebook.metadata, dict) else None
        return NotebookState(tuple(cells), metadata, key)

    def current_version(self, uri: str) -> object:
        """The version of an open document or notebook; for a closed one, a sentinel equal to no version."""
        try:
            if uri in self._notebooks:
                state = self.notebook_state(uri)
                return _CLOSED if state is None else state.version
            if uri not in self._open:
                return _CLOSED
            return self.current(uri)[1]
        except Exception:  # noqa: BLE001 - closed between the two lookups
            return _CLOSED

    def _cancel_pending(self, uri: str) -> None:
        task = self._pending.pop(uri, None)
        if task is not None and not task.done():
            task.cancel()

    # -- scheduling

    def schedule_change(self, uri: str) -> float:
        """Lint after an edit: at once after a pause in typing, else once typing pauses for `debounce`.

        The first change after a quiet spell is linted immediately, so the user waits only for the
        lint; changes that follow each other faster than `debounce` are coalesced into one lint.
        """
        now = time.monotonic()
        last = self._last_change.get(uri)
        self._last_change[uri] = now
        busy = uri in self._pending
        quiet = last is None or now - last >= self.debounce
        delay = 0 if quiet and not busy else self.debounce
        self.schedule_lint(uri, delay)
        return delay

    def schedule_lint(self, uri: str, delay: float) -> None:
        """Lint `uri` after `delay` seconds; a newer request for the same document replaces this one."""
        self._cancel_pending(uri)
        task = asyncio.ensure_future(self._lint_and_publish(uri, delay))
        self._pending[uri] = task
        task.add_done_callback(lambda done, uri=uri: self._forget(uri, done))

    def _forget(self, uri: str, task: asyncio.Task) -> None:
        if self._pending.get(uri) is task:
            del self._pending[uri]
        if not task.cancelled() and task.exception() is not None:  # pragma: no cover - defensive
            logger.error("lint task failed: %r", task.exception())

    async def _lint_and_publish(self, uri: str, delay: float) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        snapshot = await self.snapshot(uri)
        if snapshot is None or snapshot.version != self.current_version(uri):
            return  # closed, or changed meanwhile: the newer version's lint is scheduled
        if snapshot.cells is None:
            self._publish(uri, snapshot.version, [lsp for _, lsp in snapshot.findings])
            return
        on_cell: Dict[str, List[types.Diagnostic]] = {cell.uri: [] for cell in snapshot.cells}
        for diagnostic, lsp in snapshot.findings:
            on_cell[snapshot.document_of(diagnostic)[0]].append(lsp)
        for cell in snapshot.cells:
            self._publish(cell.uri, cell.version, on_cell[cell.uri])
        # Cells that left the program since (removed without a close, turned into markdown): cleared.
        for cell_uri in sorted(self._notebooks.get(uri, set()) - set(on_cell)):
            self._publish(cell_uri, None, [])
        if uri in self._notebooks:
            self._notebooks[uri] = set(on_cell)

    def _publish(self, uri: str, version: Optional[int], diagnostics: List[types.Diagnostic]) -> None:
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=diagnostics))

    def clear_cells(self, notebook_uri: str, cell_uris: Sequence[str]) -> None:
        """Publish empty diagnostics on cells that were closed (removed from the notebook, or closed with it)."""
        published = self._notebooks.get(notebook_uri, set())
        for cell_uri in cell_uris:
            published.discard(cell_uri)
            self._publish(cell_uri, None, [])

    async def snapshot(self, uri: str) -> Optional[LintSnapshot]:
        """The findings of the document's (or notebook's) current version (cached per version); None once
        superseded."""
        source: Union[str, NotebookState]
        if uri in self._notebooks:
            state = self.notebook_state(uri)
            if state is None:
                return None
            source, version = state, state.version
        elif self.is_python(uri):
            source, version = self.current(uri)
        else:
            return None
        cached = self._snapshots.get(uri)
        if cached is not None and cached.version == version and (cached.cells is not None or cached.text == source) \
                and cached.world >= self._stale.get(uri, 0):
            return cached
        loop = asyncio.get_running_loop()
        encoding = self.workspace.position_encoding
        world = self._world
        snapshot = await loop.run_in_executor(self._worker, self._lint_if_current, uri, source, version, encoding)
        if snapshot is None:
            return None
        snapshot.world = world
        self._emit(snapshot)
        if (self.is_python(uri) or self.is_notebook(uri)) and world >= self._stale.get(uri, 0):
            self._snapshots[uri] = snapshot
            self._dependencies[uri] = snapshot.dependencies
        return snapshot

    def _lint_if_current(self, uri: str, source: Union[str, NotebookState], version: object,
                         encoding) -> Optional[LintSnapshot]:
        """Runs on the worker thread."""
        if self.current_version(uri) != version:
            return None  # superseded (or closed) while queued
        if isinstance(source, NotebookState):
            return self.lint_notebook(uri, source, encoding)
        return self.lint(uri, source, version, encoding)

    def _emit(self, snapshot: LintSnapshot) -> None:
        """Send the messages a lint collected; on the event loop's thread."""
        for kind, message, show in snapshot.messages:
            level = logging.ERROR if kind == types.MessageType.Error else logging.WARNING
            logger.log(level, "%s", message)
            if show:
                if message in self._shown_errors:
                    continue
                self._shown_errors.add(message)
                self.window_show_message(types.ShowMessageParams(type=kind, message=f"torchlint: {message}"))
            self.window_log_message(types.LogMessageParams(type=kind, message=f"torchlint: {message}"))
        snapshot.messages.clear()

    # -- linting: pure, thread-safe, never raises

    def lint(self, uri: str, text: str, version: Optional[int], encoding) -> LintSnapshot:
        path = _document_path(uri)
        shown = str(path) if path is not None else uri
        snapshot = LintSnapshot(uri, version, text, shown, None, [])
        snapshot.rules = self._rules_for(path, snapshot.messages)
        if snapshot.rules is None:
            return snapshot
        found = self._findings(uri, text, shown, snapshot)
        if found is None:
            return snapshot
        positions = PositionMap(text, encoding)
        for diagnostic in found:
            self._add_finding(snapshot, diagnostic, positions, uri)
        return snapshot

    def lint_notebook(self, uri: str, state: NotebookState, encoding) -> LintSnapshot:
        """The findings of a notebook's code cells linted as one program, each on its cell."""
        path = _document_path(uri)
        shown = str(path) if path is not None else uri
        snapshot = LintSnapshot(uri, state.version, "", shown, None, [], cells=state.code_cells)
        snapshot.rules = self._rules_for(path, snapshot.messages)
        if snapshot.rules is None:
            return snapshot
        from torchlint.engine import notebook_program

        try:
            program = notebook_program(state.as_ipynb(), shown, self._cell_checker(uri))
        except Exception as error:  # noqa: BLE001 - the server must outlive any bug
            snapshot.messages.append((types.MessageType.Error, f"internal error while reading the notebook {shown}: "
                                      f"{type(error).__name__}: {error}\n{traceback.format_exc()}", False))
            return snapshot
        if program is None:
            return snapshot  # its kernel runs another language
        snapshot.text, snapshot.program = program.text, program
        found = self._findings(uri, program.text, shown, snapshot)
        if found is None:
            return snapshot
        positions: Dict[str, PositionMap] = {}
        for diagnostic in program.to_file(found):
            cell_uri, cell_text, _ = snapshot.document_of(diagnostic)
            if cell_uri not in positions:
                positions[cell_uri] = PositionMap(cell_text, encoding)
            self._add_finding(snapshot, diagnostic, positions[cell_uri], cell_uri)
        return snapshot

    def _cell_checker(self, uri: str):
        """`torchlint.engine.cell_syntax_error`, remembering its answers while a cell's code stays the same:
        an edit re-checks the cells it changed. Runs on the worker thread."""
        from torchlint.engine import cell_syntax_error

        known = self._cell_checks.get(uri, {})
        used: Dict[str, object] = {}
        self._cell_checks[uri] = used

        def check(code: str):
            if code not in used:
                used[code] = known[code] if code in known else cell_syntax_error(code)
            return used[code]

        return check

    def _findings(self, uri: str, text: str, shown: str, snapshot: LintSnapshot) -> Optional[List[Diagnostic]]:
        """The engine's findings on `text` (an internal error is logged, and gives None)."""
        from torchlint.engine import lint_source

        try:
            parser = self._parsers.get(uri)
            if parser is None:
                from torchlint.incremental import IncrementalParser

                parser = self._parsers[uri] = IncrementalParser()
            used: List[str] = []
            diagnostics, problems = lint_source(text, shown, snapshot.rules, parser, dependencies=used)
            snapshot.dependencies = tuple(sorted({_real(Path(path)) for path in used}))
        except Exception as error:  # noqa: BLE001 - the server must outlive any bug in a rule
            snapshot.messages.append((types.MessageType.Error, f"internal error while linting {shown}: "
                                      f"{type(error).__name__}: {error}\n{traceback.format_exc()}", False))
            return None
        for problem in problems:
            kind = types.MessageType.Error if problem.kind == "internal" else types.MessageType.Warning
            snapshot.messages.append((kind, problem.message + (f"\n{problem.detail}" if problem.detail else ""), False))
        return diagnostics

    def _add_finding(self, snapshot: LintSnapshot, diagnostic: Diagnostic, positions: PositionMap, uri: str) -> None:
        try:
            snapshot.findings.append((diagnostic, to_lsp_diagnostic(diagnostic, positions, self._rule_links(), uri)))
        except Exception as error:  # noqa: BLE001 - publish the others
            where = f"{snapshot.path}:" + (f"cell {diagnostic.cell}:" if diagnostic.cell else "")
            snapshot.messages.append((types.MessageType.Error, f"cannot convert {diagnostic.code} at "
                                      f"{where}{diagnostic.line}: {error!r}", False))

    def _rules_for(self, path: Optional[Path], messages: list) -> Optional[tuple]:
        from torchlint.config import ConfigError, SettingsResolver

        try:
            # A fresh resolver each time: an edited pyproject.toml counts at once.
            resolver = SettingsResolver()
            if path is not None:
                return resolver.for_path(path).rules_for(path)
            root = self.workspace.root_path
            folder = Path(root) if root else Path.cwd()
            return resolver.for_folder(folder.resolve()).rules_for(folder / "untitled.py")
        except ConfigError as error:
            messages.append((types.MessageType.Error, str(error), True))
        except Exception as error:  # noqa: BLE001
            messages.append((types.MessageType.Error, f"cannot load the configuration for {path}: {error!r}", False))
        return None

    def fixed_documents(self, snapshot: LintSnapshot) -> Dict[str, str]:
        """{uri: new text} of the documents (a notebook's cells) that every safe fix changes, applied to a
        fixpoint as `torchlint --fix` does; empty when nothing changes. Runs on the worker."""
        if snapshot.rules is None or not any(d.fixable() for d, _ in snapshot.findings):
            return {}
        if snapshot.fixed is None:
            from torchlint.fix import fix_source
            from torchlint.notebook import NotebookError, fixed_cells

            try:
                fixed = fix_source(snapshot.text, snapshot.path, snapshot.rules).source
                if fixed == snapshot.text:
                    texts = [text for _, text, _ in snapshot.documents()]
                elif snapshot.cells is None:
                    texts = [fixed]
                else:  # the program's text back into the cells, as `torchlint --fix` writes them
                    texts = fixed_cells(snapshot.program.notebook, fixed)
            except NotebookError as error:
                snapshot.messages.append((types.MessageType.Warning, f"{snapshot.path}: fixes not offered: {error}",
                                          False))
                return {}
            except Exception as error:  # noqa: BLE001
                snapshot.messages.append((types.MessageType.Error, f"fixing {snapshot.path} failed: {error!r}", False))
                return {}
            snapshot.fixed = {uri: new for (uri, old, _), new in zip(snapshot.documents(), texts) if new != old}
        return snapshot.fixed

    def report_internal_error(self, doing: str, error: Exception) -> None:
        message = f"torchlint: {doing} failed: {type(error).__name__}: {error}\n{traceback.format_exc()}"
        logger.error("%s", message)
        self.window_log_message(types.LogMessageParams(type=types.MessageType.Error, message=message))

    # -- code actions

    async def code_actions(self, params: types.CodeActionParams) -> Optional[List[types.CodeAction]]:
        uri = params.text_document.uri
        linted = self.linted_uri(uri)  # a notebook's cell is linted with its notebook
        if linted is None:
            return None
        only = params.context.only
        want_quickfix = _kind_wanted(types.CodeActionKind.QuickFix.value, only)
        fix_all_kind = FIX_ALL_KIND
        if linted != uri and only and _kind_wanted(NOTEBOOK_FIX_ALL_KIND, only):
            fix_all_kind = NOTEBOOK_FIX_ALL_KIND
        want_fix_all = _kind_wanted(fix_all_kind, only)
        if not (want_quickfix or want_fix_all):
            return None
        snapshot = await self.snapshot(linted)
        if snapshot is None or snapshot.version != self.current_version(linted):
            return None
        actions: List[types.CodeAction] = []
        here = unquote(uri)
        in_range = [(d, lsp) for d, lsp in snapshot.findings
                    if unquote(snapshot.document_of(d)[0]) == here and _overlaps(lsp.range, params.range)]
        if want_quickfix and in_range:
            document, text, version = snapshot.document_of(in_range[0][0])  # the one asked about
            positions = PositionMap(text, self.workspace.position_encoding)
            for diagnostic, lsp in in_range:
                if diagnostic.fix is None:
                    continue
                fix = diagnostic.fix
                edits = [
                    types.TextEdit(range=positions.range(e.line, e.column, e.end_line, e.end_column), new_text=e.content)
                    for e in fix.edits
                ]
                actions.append(types.CodeAction(
                    title=fix.message + ("" if fix.is_safe else " (unsafe)"),
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[lsp],
                    is_preferred=True if fix.is_safe else None,
                    edit=self._workspace_edit([(document, version, edits)]),
                ))
        # Fix-all is document-wide (notebook-wide in a notebook): offered when asked for by kind
        # (editor.codeActionsOnSave, "Source Action..."), or in the light bulb where a safely fixable finding
        # is under the cursor.
        explicit = bool(only) and want_fix_all
        if want_fix_all and (explicit or any(d.fixable() for d, _ in in_range)):
            if not explicit and self._client_resolves_edits():
                # The light bulb asks on every cursor move: fix the whole file only if it is picked.
                data = {"uri": uri}
                if snapshot.cells is None:
                    data["version"] = snapshot.version
                actions.append(types.CodeAction(title=FIX_ALL_TITLE, kind=fix_all_kind, data=data))
            else:
                action = await self._fix_all(snapshot, fix_all_kind)
                if action is not None:
                    actions.append(action)
        return actions

    async def resolve_code_action(self, action: types.CodeAction) -> types.CodeAction:
        """Fill in the edit of a fix-all action offered without one."""
        data = action.data if isinstance(action.data, dict) else {}
        uri = data.get("uri")
        if action.kind not in (FIX_ALL_KIND, NOTEBOOK_FIX_ALL_KIND) or action.edit is not None \
                or not isinstance(uri, str):
            return action
        linted = self.linted_uri(uri)
        snapshot = await self.snapshot(linted) if linted is not None else None
        if snapshot is None or snapshot.version != self.current_version(linted):
            return action
        resolved = await self._fix_all(snapshot, action.kind)
        if resolved is not None:
            action.edit = resolved.edit
        return action

    async def _fix_all(self, snapshot: LintSnapshot, kind: str = FIX_ALL_KIND) -> Optional[types.CodeAction]:
        loop = asyncio.get_running_loop()
        fixed = await loop.run_in_executor(self._worker, self.fixed_documents, snapshot)
        self._emit(snapshot)
        if not fixed or snapshot.version != self.current_version(snapshot.uri):
            return None
        changes = []
        for uri, text, version in snapshot.documents():
            if uri in fixed:  # the whole document (cell) replaced, as `torchlint --fix` writes it
                whole = types.Range(start=types.Position(line=0, character=0),
                                    end=PositionMap(text, self.workspace.position_encoding).end())
                changes.append((uri, version, [types.TextEdit(range=whole, new_text=fixed[uri])]))
        return types.CodeAction(title=FIX_ALL_TITLE, kind=kind, edit=self._workspace_edit(changes))

    def _client_resolves_edits(self) -> bool:
        capabilities = self.client_capabilities
        document = capabilities.text_document if capabilities else None
        code_action = document.code_action if document else None
        support = code_action.resolve_support if code_action else None
        return bool(code_action and code_action.data_support and support and "edit" in support.properties)

    def _workspace_edit(self, changes: List[Tuple[str, Optional[int], List[types.TextEdit]]]) -> types.WorkspaceEdit:
        """One edit of one or more documents (a notebook's cells): (uri, version, edits) each."""
        capabilities = self.client_capabilities
        workspace = capabilities.workspace if capabilities else None
        edit_caps = workspace.workspace_edit if workspace else None
        if edit_caps is not None and edit_caps.document_changes:
            # Versioned: the client refuses the edit if a document changed since.
            return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                edits=edits,
            ) for uri, version, edits in changes])
        return types.WorkspaceEdit(changes={uri: edits for uri, _, edits in changes})


def build_server(debounce: float = DEBOUNCE_SECONDS) -> TorchlintLanguageServer:
    server = TorchlintLanguageServer(debounce)

    @server.feature(types.INITIALIZED)
    def initialized(ls: TorchlintLanguageServer, params: types.InitializedParams) -> None:
        ls.warm_up()
        ls.watch_files()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TorchlintLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        document = params.text_document
        if ls.open_document(document.uri, document.language_id):
            ls.text_changed(document.uri, 0, opened=True)
            ls.schedule_lint(document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TorchlintLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        if ls.is_python(uri):
            delay = ls.schedule_change(uri)
            ls.text_changed(uri, delay)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: TorchlintLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if ls.is_python(uri):
            ls.forget_snapshot(uri)  # the configuration may have changed
            ls.schedule_lint(uri, 0)
            path = _document_path(uri)
            if path is not None:  # and the files that depend on it may read another configuration
                ls.relint_dependents(path, 0, uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TorchlintLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        if ls.is_python(uri):
            ls.close_document(uri)
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
            ls.text_closed(uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: TorchlintLanguageServer, params: types.DidChangeWatchedFilesParams) -> None:
        ls.files_changed(params.changes)

    # Notebooks: pygls keeps the notebook and its cells' text documents in the workspace before these run.
    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def did_open_notebook(ls: TorchlintLanguageServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.open_notebook(params.notebook_document.uri)
        ls.schedule_lint(params.notebook_document.uri, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def did_change_notebook(ls: TorchlintLanguageServer, params: types.DidChangeNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        if not ls.is_notebook(uri):
            return
        structure = params.change.cells.structure if params.change.cells is not None else None
        if structure is not None and structure.did_close:
            ls.clear_cells(uri, [cell.uri for cell in structure.did_close])
        ls.schedule_change(uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def did_save_notebook(ls: TorchlintLanguageServer, params: types.DidSaveNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        if ls.is_notebook(uri):
            ls.forget_snapshot(uri)  # the configuration may have changed
            ls.schedule_lint(uri, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def did_close_notebook(ls: TorchlintLanguageServer, params: types.DidCloseNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        if ls.is_notebook(uri):
            published = ls.close_notebook(uri)
            closed = [cell.uri for cell in params.cell_text_documents]
            ls.clear_cells(uri, closed + sorted(published - set(closed)))

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND, NOTEBOOK_FIX_ALL_KIND],
                                resolve_provider=True),
    )
    async def code_action(ls: TorchlintLanguageServer, params: types.CodeActionParams):
        try:
            return await ls.code_actions(params)
        except Exception as error:  # noqa: BLE001 - an empty answer beats a broken light bulb
            ls.report_internal_error("code actions", error)
            return None

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def code_action_resolve(ls: TorchlintLanguageServer, params: types.CodeAction) -> types.CodeAction:
        try:
            return await ls.resolve_code_action(params)
        except Exception as error:  # noqa: BLE001
            ls.report_internal_error("resolving a code action", error)
            return params

    return server


def serve(argv: List[str]) -> int:
    """`torchlint lsp [--stdio] [--debounce-ms MS] [--log-level LEVEL]`: serve until the client exits."""
    parser = argparse.ArgumentParser(
        prog="torchlint lsp",
        description="Run torchlint as a Language Server (JSON-RPC over stdin/stdout).",
    )
    parser.add_argument("--stdio", action="store_true", help="use stdin/stdout (the default and only transport)")
    parser.add_argument("--debounce-ms", type=float, default=DEBOUNCE_SECONDS * 1000,
                        help="wait this long after the last edit before linting (default: %(default)g)")
    parser.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                        help="what to log on stderr (default: %(default)s)")
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, args.log_level),
                        format="%(asctime)s %(name)s %(levelname)s: %(message)s")
    server = build_server(max(args.debounce_ms, 0) / 1000)
    server.start_io()
    return 0
