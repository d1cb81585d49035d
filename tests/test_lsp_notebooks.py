"""`torchlint lsp` as a notebook client meets it: LSP 3.17 notebook documents, one program per notebook.

The client here does what VS Code's notebook view does: it opens a notebook with
`notebookDocument/didOpen` (one text document per cell, under its own URI),
sends cell edits, added, moved and removed cells and cell kind changes with
`notebookDocument/didChange`, and asks for code actions with a cell's URI. Every
notebook is also written to disk as the `.ipynb` Jupyter would save, so what the
server publishes is compared with what the `torchlint` command reports on it:
the same codes and messages on the same cells and lines, and the same cell
sources after fixing.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from conftest import run_torchlint  # noqa: E402
from test_lsp import TIMEOUT, apply, mark, recording_client, rng, text_edits  # noqa: E402
from torchlint.lsp import FIX_ALL_KIND, NOTEBOOK_FIX_ALL_KIND  # noqa: E402

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "torchlint", "lsp"], client_factory=recording_client)

CODE = types.NotebookCellKind.Code
MARKUP = types.NotebookCellKind.Markup

SETUP = (
    "%matplotlib inline\n"
    "!nvidia-smi\n"
    "import torch\n"
    "import torch.nn as nn\n"
    "model = nn.Linear(4, 1)\n"
    "criterion = nn.MSELoss()\n"
)
# Built here, stepped in a later cell: without this cell the loop below has no optimizer that is known to be one.
OPTIMIZER = "sgd = torch.optim.SGD(model.parameters(), lr=0.1)\n"
NO_RESET = (
    "for x, y in loader:\n"
    "    loss = criterion(model(x), y)\n"
    "    loss.backward()\n"
    "    sgd.step()\n"
)
COUNTER = "step = 0\n"
# `step` counts from 0 (the cell above): the first update comes after one micro-batch (TL004); the mean loss
# is not divided by `accum` (TL003). The micro-batches after the last update are stepped after the loop (no TL010).
ACCUMULATE = (
    "for x, y in loader:\n"
    "    loss = criterion(model(x), y)\n"
    "    loss.backward()\n"
    "    if step % accum == 0:\n"
    "        sgd.step()\n"
    "        sgd.zero_grad()\n"
    "    step += 1\n"
    "sgd.step()\n"
)
# A markdown cell that quotes a buggy loop: prose, not code.
PROSE = "## Training\n\n```python\nfor x, y in loader:\n    loss.backward()\n    sgd.step()\n```\n"
PASTED_LOG = "Epoch 1/10 loss: 0.532 acc: 0.81\nEpoch 2/10 loss: 0.401 acc: 0.85\n"
SHELL = "for f in runs/*; do\n  grep 'loss.backward()' $f\ndone\n"


# --- the notebook client --------------------------------------------------------------


@dataclass
class Cell:
    uri: str
    kind: types.NotebookCellKind
    text: str
    language: str = "python"
    version: int = 1

    def item(self) -> types.TextDocumentItem:
        return types.TextDocumentItem(uri=self.uri, language_id=self.language, version=self.version, text=self.text)

    def cell(self) -> types.NotebookCell:
        return types.NotebookCell(kind=self.kind, document=self.uri)


class Notebook:
    """One notebook as the client holds it: its cells (with versions), on disk as the `.ipynb` too."""

    def __init__(self, client: LanguageClient, path: Path, cells: Sequence[Tuple]) -> None:
        self.client, self.path, self.uri, self.version = client, path, path.as_uri(), 1
        self._made = 0
        self.cells = [self.make(*cell) for cell in cells]

    def make(self, kind: types.NotebookCellKind, text: str, language: str = "python") -> Cell:
        self._made += 1
        # Spelled as VS Code spells a cell: the notebook's path and an escaped fragment of its own.
        return Cell(f"vscode-notebook-cell:{self.path.as_posix()}#W{self._made}sZmlsZQ%3D%3D", kind, text, language)

    @property
    def code_cells(self) -> List[Cell]:
        return [cell for cell in self.cells if cell.kind == CODE]

    def number(self, uri: str) -> int:
        """The cell's number among code cells, as the command line counts it."""
        return [cell.uri for cell in self.code_cells].index(uri) + 1

    def save(self) -> None:
        """The `.ipynb` Jupyter (or VS Code) would write for the cells as they are now."""
        cells = []
        for cell in self.cells:
            source = cell.text.splitlines(keepends=True)
            if cell.kind == MARKUP:
                cells.append({"cell_type": "markdown", "metadata": {}, "source": source})
                continue
            metadata = {} if cell.language == "python" else {"vscode": {"languageId": cell.language}}
            cells.append({"cell_type": "code", "execution_count": None, "metadata": metadata, "outputs": [],
                          "source": source})
        data = {"cells": cells, "metadata": {"kernelspec": {"name": "python3", "language": "python",
                                                             "display_name": "Python 3"}},
                "nbformat": 4, "nbformat_minor": 5}
        self.path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")

    async def open(self) -> Dict[str, List[types.Diagnostic]]:
        self.save()
        start = mark(self.client)
        self.client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(uri=self.uri, notebook_type="jupyter-notebook",
                                                     version=self.version, cells=[c.cell() for c in self.cells],
                                                     metadata={}),
            cell_text_documents=[cell.item() for cell in self.cells]))
        return await self.published(start)

    def _change(self, change: types.NotebookDocumentChangeEvent) -> None:
        self.version += 1
        self.save()
        self.client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(uri=self.uri, version=self.version),
            change=change))

    def edit(self, index: int, old: str, new: str) -> None:
        """Replace the first `old` in cell `index` by `new`: an incremental edit of that cell's text."""
        cell = self.cells[index]
        at = cell.text.index(old)
        line = cell.text.count("\n", 0, at)
        column = at - (cell.text.rfind("\n", 0, at) + 1)
        assert "\n" not in old
        cell.text, cell.version = cell.text[:at] + new + cell.text[at + len(old):], cell.version + 1
        self._change(types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
            types.NotebookDocumentCellContentChanges(
                document=types.VersionedTextDocumentIdentifier(uri=cell.uri, version=cell.version),
                changes=[types.TextDocumentContentChangePartial(range=rng(line, column, column + len(old)), text=new)],
            )])))

    def replace(self, texts: Sequence[str]) -> None:
        """New texts for the code cells, in one change (as a client applies a workspace edit)."""
        changed = []
        for cell, text in zip(self.code_cells, texts):
            if text != cell.text:
                cell.text, cell.version = text, cell.version + 1
                changed.append(types.NotebookDocumentCellContentChanges(
                    document=types.VersionedTextDocumentIdentifier(uri=cell.uri, version=cell.version),
                    changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
        self._change(types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=changed)))

    def splice(self, start: int, delete_count: int, new: Sequence[Cell] = (), opened: Sequence[Cell] = (),
               closed: Sequence[Cell] = ()) -> None:
        """A change of the cell array, as LSP describes cells added, removed and moved."""
        self.cells[start:start + delete_count] = list(new)
        self._change(types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(
            structure=types.NotebookDocumentCellChangeStructure(
                array=types.NotebookCellArrayChange(start=start, delete_count=delete_count,
                                                    cells=[cell.cell() for cell in new]),
                did_open=[cell.item() for cell in opened] or None,
                did_close=[types.TextDocumentIdentifier(uri=cell.uri) for cell in closed] or None))))

    def move(self, index: int, to: int) -> None:
        """Move a cell, as VS Code sends it: the span between the two places replaced by its cells reordered."""
        low, high = min(index, to), max(index, to)
        cells = list(self.cells)
        cells.insert(to, cells.pop(index))
        self.splice(low, high - low + 1, cells[low:high + 1])

    def set_kind(self, index: int, kind: types.NotebookCellKind) -> None:
        cell = self.cells[index]
        cell.kind = kind
        self._change(types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(
            data=[types.NotebookCell(kind=kind, document=cell.uri)])))

    def close(self) -> None:
        self.client.notebook_document_did_close(types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=self.uri),
            cell_text_documents=[types.TextDocumentIdentifier(uri=cell.uri) for cell in self.cells]))

    async def published(self, after: int, uris: Optional[Sequence[str]] = None) -> Dict[str, List[types.Diagnostic]]:
        """The first diagnostics published on each cell (every code cell, unless `uris`) since `after`."""
        wanted = list(uris if uris is not None else [cell.uri for cell in self.code_cells])

        async def wait() -> Dict[str, List[types.Diagnostic]]:
            found: Dict[str, List[types.Diagnostic]] = {}
            index = after
            while True:
                while index < len(self.client.published):
                    params = self.client.published[index]
                    index += 1
                    if params.uri in wanted and params.uri not in found:
                        found[params.uri] = list(params.diagnostics)
                if len(found) == len(wanted):
                    return found
                self.client.published_event.clear()
                await self.client.published_event.wait()

        return await asyncio.wait_for(wait(), TIMEOUT)

    def findings(self, published: Dict[str, List[types.Diagnostic]]) -> List[tuple]:
        """(code, cell number, line, column, end line, end column, message), 1-based as the command line says."""
        return sorted((d.code, self.number(uri), d.range.start.line + 1, d.range.start.character + 1,
                       d.range.end.line + 1, d.range.end.character + 1, d.message)
                      for uri, diagnostics in published.items() for d in diagnostics)

    async def code_actions(self, cell: Cell, range_: types.Range,
                           only: Optional[List[str]] = None) -> List[types.CodeAction]:
        result = await asyncio.wait_for(self.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=cell.uri), range=range_,
            context=types.CodeActionContext(diagnostics=[], only=only))), TIMEOUT)
        return list(result or [])


def cli_findings(path: Path, *args: str) -> List[tuple]:
    """What `torchlint` reports on the `.ipynb` on disk, in the terms of `Notebook.findings`."""
    result = run_torchlint(str(path), "--output-format", "json", "--no-cache", *args, cwd=path.parent)
    assert result.returncode in (0, 1), result.stderr
    return sorted((d["code"], d["cell"], d["line"], d["column"], d["end_line"], d["end_column"], d["message"])
                  for d in json.loads(result.stdout))


def cli_fixed_cells(path: Path, tmp_path: Path) -> List[str]:
    """The code cells' sources after `torchlint --fix` on a copy of the `.ipynb`."""
    copy = tmp_path / "fixed" / path.name
    copy.parent.mkdir(exist_ok=True)
    shutil.copy(path, copy)
    result = run_torchlint(str(copy), "--fix", "--no-cache", cwd=copy.parent)
    assert result.returncode in (0, 1), result.stderr
    return ["".join(cell["source"]) for cell in json.loads(copy.read_text())["cells"] if cell["cell_type"] == "code"]


def notebook_capabilities(name: str = "visual-studio-code") -> types.ClientCapabilities:
    """A client's capabilities with LSP 3.17 notebook document sync, as VS Code's notebook view offers it."""
    capabilities = client_capabilities(name)
    capabilities.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities(execution_summary_support=True))
    return capabilities


async def start(client: LanguageClient, root: Path, name: str = "visual-studio-code") -> types.InitializeResult:
    return await client.initialize_session(types.InitializeParams(
        capabilities=notebook_capabilities(name), root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)]))


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    await start(lsp_client, tmp_path)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def emacs(lsp_client: LanguageClient, tmp_path: Path):
    """A client that cannot resolve code actions (it gets fix-all with its edit)."""
    await start(lsp_client, tmp_path, "emacs")
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def neovim(lsp_client: LanguageClient, tmp_path: Path):
    """A client that takes unversioned edits (`changes`, by URI)."""
    await start(lsp_client, tmp_path, "neovim")
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def bare(lsp_client: LanguageClient):
    yield


def codes(published: Dict[str, List[types.Diagnostic]], cell: Cell) -> List[str]:
    return sorted(d.code for d in published[cell.uri])


def apply_to_cells(notebook: Notebook, edit: types.WorkspaceEdit) -> List[str]:
    """The code cells' texts with a workspace edit applied, each cell's edits to that cell."""
    return [apply(cell.text, text_edits(edit, cell.uri)) for cell in notebook.code_cells]


# --- the capability ----------------------------------------------------------------------


@pytest.mark.asyncio
async def test_notebook_sync_is_declared_for_jupyter_notebooks_with_python_cells(bare: LanguageClient,
                                                                                   tmp_path: Path):
    result = await start(bare, tmp_path)
    sync = result.capabilities.notebook_document_sync
    assert sync is not None and sync.save is True
    (selector,) = sync.notebook_selector
    assert selector.notebook == "jupyter-notebook"
    assert [cell.language for cell in selector.cells] == ["python"]
    kinds = result.capabilities.code_action_provider.code_action_kinds
    assert FIX_ALL_KIND in kinds and NOTEBOOK_FIX_ALL_KIND in kinds
    await bare.shutdown_session()


# --- diagnostics -------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_findings_land_on_their_cells_as_the_command_line_reports_them(client: LanguageClient,
                                                                            tmp_path: Path):
    notebook = Notebook(client, tmp_path / "train.ipynb", [
        (MARKUP, PROSE), (CODE, SETUP), (CODE, OPTIMIZER + "accum = 4\n"), (CODE, "%%bash\n" + SHELL),
        (CODE, COUNTER), (CODE, SHELL, "shellscript"), (CODE, ACCUMULATE)])
    published = await notebook.open()
    loop = notebook.cells[6]
    assert codes(published, loop) == ["TL003", "TL004"]
    assert all(published[cell.uri] == [] for cell in notebook.code_cells if cell is not loop)
    assert notebook.cells[0].uri not in client.diagnostics  # markdown is not code: nothing published on it
    tl004 = next(d for d in published[loop.uri] if d.code == "TL004")
    assert tl004.range == rng(3, 7, 24)  # in the loop cell's own lines
    assert loop.text.splitlines()[3][7:24] == "step % accum == 0"
    assert tl004.source == "torchlint" and tl004.severity == types.DiagnosticSeverity.Error
    (related,) = tl004.related_information  # the timeline, on the cell
    assert related.location.uri == loop.uri and related.message.startswith("timeline")
    # Exactly what the command line says about the saved notebook: codes, messages, cells, lines, columns.
    assert notebook.findings(published) == cli_findings(notebook.path)


@pytest.mark.asyncio
async def test_a_loop_split_across_cells_is_one_program(client: LanguageClient, tmp_path: Path):
    notebook = Notebook(client, tmp_path / "train.ipynb", [
        (CODE, SETUP), (CODE, OPTIMIZER), (MARKUP, "Now train."), (CODE, "batch_size = 8\n"), (CODE, NO_RESET)])
    published = await notebook.open()
    loop = notebook.cells[4]
    # `sgd` is an optimizer because cell 2 builds it; the loop in cell 5 never resets its gradients.
    assert codes(published, loop) == ["TL002"]
    assert published[loop.uri][0].message.startswith("`sgd.step()` runs in this loop but nothing")
    assert notebook.findings(published) == cli_findings(notebook.path)

    # The same cell on its own, as a client without notebook sync would send it: no optimizer, no finding.
    alone = Notebook(client, tmp_path / "alone.ipynb", [(CODE, SETUP + NO_RESET)])
    assert (await alone.open())[alone.cells[0].uri] == []


@pytest.mark.asyncio
async def test_editing_a_cell_to_fix_the_bug_clears_its_diagnostic(client: LanguageClient, tmp_path: Path):
    notebook = Notebook(client, tmp_path / "train.ipynb", [
        (CODE, SETUP + OPTIMIZER + "accum = 4\n"), (CODE, COUNTER), (CODE, ACCUMULATE)])
    loop = notebook.cells[2]
    assert codes(await notebook.open(), loop) == ["TL003", "TL004"]
    start = mark(client)
    notebook.edit(2, "if step % accum == 0:", "if (step + 1) % accum == 0:")
    published = await notebook.published(start)
    assert codes(published, loop) == ["TL003"]
    assert notebook.findings(published) == cli_findings(notebook.path)

    start = mark(client)
    notebook.edit(2, "loss.backward()", "(loss / accum).backward()")
    assert (await notebook.published(start))[loop.uri] == []
    # The version of the cell's text the diagnostics were computed for.
    assert [p.version for p in client.published[start:] if p.uri == loop.uri] == [loop.version]


@pytest.mark.asyncio
async def test_moving_a_cell_relints_the_notebook(client: LanguageClient, tmp_path: Path):
    notebook = Notebook(client, tmp_path / "train.ipynb", [
        (CODE, SETUP + OPTIMIZER + "accum = 4\n"), (CODE, ACCUMULATE.replace("loss.backward()", "(loss / accum)"
                                                                             ".backward()")), (CODE, COUNTER)])
    loop = notebook.cells[1]
    # `step = 0` runs after the loop: nothing says where `step` starts, so nothing is said about the condition.
    assert codes(await notebook.open(), loop) == []
    start = mark(client)
    notebook.move(2, 1)  # the counter's cell now comes before the loop's
    published = await notebook.published(start)
    assert codes(published, loop) == ["TL004"]
    assert notebook.findings(published) == cli_findings(notebook.path)
    start = mark(client)
    notebook.move(1, 2)
    assert codes(await notebook.published(start), loop) == []


@pytest.mark.asyncio
async def test_removing_and_adding_cells_relints_and_clears_removed_cells(client: LanguageClient, tmp_path: Path):
    notebook = Notebook(client, tmp_path / "train.ipynb", [
        (CODE, SETUP), (CODE, OPTIMIZER), (CODE, NO_RESET), (CODE, NO_RESET.replace("x, y", "a, b"))])
    first, second = notebook.cells[2], notebook.cells[3]
    published = await notebook.open()
    assert codes(published, first) == codes(published, second) == ["TL002"]

    # The second loop removed: its diagnostics are cleared; the first loop keeps its own.
    start = mark(client)
    notebook.splice(3, 1, closed=[second])
    published = await notebook.published(start, [cell.uri for cell in notebook.code_cells] + [second.uri])
    assert published[second.uri] == [] and codes(published, first) == ["TL002"]

    # The optimizer's cell removed: `sgd` is no longer known to be an optimizer.
    start = mark(client)
    optimizer = notebook.cells[1]
    notebook.splice(1, 1, closed=[optimizer])
    assert (await notebook.published(start))[first.uri] == []

    # Added back, as a new cell under a new URI: TL002 again.
    start = mark(client)
    added = notebook.make(CODE, OPTIMIZER)
    notebook.splice(1, 0, [added], opened=[added])
    published = await notebook.published(start)
    assert codes(published, first) == ["TL002"] and published[added.uri] == []
    assert notebook.findings(published) == cli_findings(notebook.path)


@pytest.mark.asyncio
async def test_a_cell_turned_into_markdown_leaves_the_program(client: LanguageClient, tmp_path: Path):
    notebook = Notebook(client, tmp_path / "train.ipynb", [(CODE, SETUP + OPTIMIZER), (CODE, NO_RESET)])
    loop = notebook.cells[1]
    assert codes(await notebook.open(), loop) == ["TL002"]
    start = mark(client)
    notebook.set_kind(1, MARKUP)
    assert (await notebook.published(start, [loop.uri]))[loop.uri] == []
    assert cli_findings(notebook.path) == []
    start = mark(client)
    notebook.set_kind(1, CODE)
    assert codes(await notebook.published(start), loop) == ["TL002"]


@pytest.mark.asyncio
async def test_a_cell_that_does_not_parse_gets_its_own_syntax_error_and_the_others_still_report(
        client: LanguageClient, tmp_path: Path):
    notebook = Notebook(client, tmp_path / "train.ipynb", [
        (CODE, SETUP + OPTIMIZER + "accum = 4\n"), (CODE, PASTED_LOG), (CODE, COUNTER), (CODE, ACCUMULATE)])
    published = await notebook.open()
    log, loop = notebook.cells[1], notebook.cells[3]
    assert codes(published, log) == ["TL000"]
    assert published[log.uri][0].message == "SyntaxError: invalid syntax"
    assert published[log.uri][0].range.start == types.Position(line=0, character=6)
    assert codes(published, loop) == ["TL003", "TL004"]
    assert notebook.findings(published) == cli_findings(notebook.path)

    # Half-typed code in another cell: its own TL000, the loop's findings stay.
    start = mark(client)
    notebook.edit(2, "step = 0", "step = (")
    published = await notebook.published(start)
    assert codes(published, notebook.cells[2]) == ["TL000"]
    assert codes(published, log) == ["TL000"] and codes(published, loop) == ["TL003"]
    assert notebook.findings(published) == cli_findings(notebook.path)


@pytest.mark.asyncio
async def test_saving_the_notebook_rereads_the_configuration(client: LanguageClient, tmp_path: Path):
    notebook = Notebook(client, tmp_path / "train.ipynb", [
        (CODE, SETUP + OPTIMIZER + "accum = 4\n"), (CODE, COUNTER), (CODE, ACCUMULATE)])
    loop = notebook.cells[2]
    assert codes(await notebook.open(), loop) == ["TL003", "TL004"]
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nignore = ["TL004"]\n', encoding="utf-8")
    start = mark(client)
    client.notebook_document_did_save(types.DidSaveNotebookDocumentParams(
        notebook_document=types.NotebookDocumentIdentifier(uri=notebook.uri)))
    assert codes(await notebook.published(start), loop) == ["TL003"]


@pytest.mark.asyncio
async def test_closing_the_notebook_clears_its_cells(client: LanguageClient, tmp_path: Path):
    notebook = Notebook(client, tmp_path / "train.ipynb", [(CODE, SETUP + OPTIMIZER), (CODE, NO_RESET)])
    loop = notebook.cells[1]
    assert codes(await notebook.open(), loop) == ["TL002"]
    start = mark(client)
    notebook.close()
    assert (await notebook.published(start))[loop.uri] == []
    assert await notebook.code_actions(loop, rng(0, 0, 100)) == []


# --- code actions ------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_quick_fix_edits_its_cell(client: LanguageClient, tmp_path: Path):
    notebook = Notebook(client, tmp_path / "train.ipynb", [
        (CODE, SETUP + OPTIMIZER + "accum = 4\n"), (CODE, COUNTER), (CODE, ACCUMULATE)])
    loop = notebook.cells[2]
    published = await notebook.open()
    tl003 = next(d for d in published[loop.uri] if d.code == "TL003")
    actions = await notebook.code_actions(loop, tl003.range, only=[types.CodeActionKind.QuickFix])
    assert [a.title for a in actions] == ["Divide `loss` by `accum` before `backward()`"]
    (change,) = actions[0].edit.document_changes  # one cell: the loop's, at the version the fix was made for
    assert change.text_document.uri == loop.uri and change.text_document.version == loop.version
    assert apply(loop.text, change.edits) == ACCUMULATE.replace(
        "    loss.backward()\n", "    loss = loss / accum\n    loss.backward()\n")
    # Asked with another cell's URI: that cell's findings only (none).
    assert await notebook.code_actions(notebook.cells[1], rng(0, 0, 100), only=["quickfix"]) == []


@pytest.mark.asyncio
async def test_fix_all_edits_the_right_cells_as_the_command_line_fixes_them(client: LanguageClient, tmp_path: Path):
    second_loop = ACCUMULATE.replace("if step %", "if k %").replace("step += 1", "k += 1")
    notebook = Notebook(client, tmp_path / "train.ipynb", [
        (CODE, SETUP + OPTIMIZER + "accum = 4\n"), (CODE, COUNTER), (MARKUP, PROSE), (CODE, ACCUMULATE),
        (CODE, PASTED_LOG), (CODE, "k = 0\n!echo next\n" + second_loop)])
    first, second = notebook.cells[3], notebook.cells[5]
    published = await notebook.open()
    assert codes(published, first) == codes(published, second) == ["TL003", "TL004"]
    expected = cli_fixed_cells(notebook.path, tmp_path)
    assert expected[2] != first.text and expected[4] != second.text  # the command line fixes both loops

    # On save in a cell ("editor.codeActionsOnSave"), and on the notebook's ("notebook.codeActionsOnSave").
    for only, kind in (([types.CodeActionKind.SourceFixAll], FIX_ALL_KIND),
                       (["notebook.source.fixAll"], NOTEBOOK_FIX_ALL_KIND)):
        (action,) = await notebook.code_actions(notebook.cells[0], rng(0, 0, 0), only=only)
        assert (action.title, action.kind) == ("Fix all torchlint problems", kind)
        changed = [change.text_document for change in action.edit.document_changes]
        assert [(c.uri, c.version) for c in changed] == [(first.uri, first.version), (second.uri, second.version)]
        assert apply_to_cells(notebook, action.edit) == expected

    # In the light bulb of a finding: resolved on demand into the same edit.
    tl004 = next(d for d in published[second.uri] if d.code == "TL004")
    actions = await notebook.code_actions(second, tl004.range)
    assert [a.kind for a in actions] == ["quickfix", FIX_ALL_KIND]
    assert actions[1].edit is None
    resolved = await asyncio.wait_for(client.code_action_resolve_async(actions[1]), TIMEOUT)
    assert apply_to_cells(notebook, resolved.edit) == expected

    # Applied by the client: the cells as `torchlint --fix` writes them, and nothing left to fix.
    start = mark(client)
    notebook.replace(apply_to_cells(notebook, resolved.edit))
    published = await notebook.published(start)
    assert notebook.findings(published) == cli_findings(notebook.path)
    assert {d.code for diagnostics in published.values() for d in diagnostics} == {"TL000"}  # the pasted log
    assert await notebook.code_actions(first, rng(0, 0, 0), only=["source.fixAll"]) == []


@pytest.mark.asyncio
async def test_fix_all_without_resolve_support(emacs: LanguageClient, tmp_path: Path):
    notebook = Notebook(emacs, tmp_path / "train.ipynb", [
        (CODE, SETUP + OPTIMIZER + "accum = 4\n"), (CODE, COUNTER), (CODE, ACCUMULATE)])
    loop = notebook.cells[2]
    published = await notebook.open()
    expected = cli_fixed_cells(notebook.path, tmp_path)
    actions = await notebook.code_actions(loop, published[loop.uri][0].range)
    fix_all = [a for a in actions if a.kind == FIX_ALL_KIND]
    assert len(fix_all) == 1 and fix_all[0].edit is not None
    assert apply_to_cells(notebook, fix_all[0].edit) == expected


@pytest.mark.asyncio
async def test_fix_all_as_unversioned_edits_by_cell(neovim: LanguageClient, tmp_path: Path):
    notebook = Notebook(neovim, tmp_path / "train.ipynb", [
        (CODE, SETUP + OPTIMIZER + "accum = 4\n"), (CODE, COUNTER), (CODE, ACCUMULATE)])
    await notebook.open()
    (action,) = await notebook.code_actions(notebook.cells[0], rng(0, 0, 0), only=["source.fixAll"])
    assert action.edit.document_changes is None and list(action.edit.changes) == [notebook.cells[2].uri]
    assert apply_to_cells(notebook, action.edit) == cli_fixed_cells(notebook.path, tmp_path)


# --- in-process ----------------------------------------------------------------------------


def test_a_notebook_whose_kernel_runs_another_language_is_not_linted(tmp_path: Path):
    from torchlint.lsp import NotebookCellText, NotebookState, build_server

    cells = (NotebookCellText("cell:1", True, "python", 1, SETUP + OPTIMIZER),
             NotebookCellText("cell:2", True, "python", 1, NO_RESET))
    uri = (tmp_path / "train.ipynb").as_uri()
    server = build_server()
    python = server.lint_notebook(uri, NotebookState(cells, {}, (1,)), "utf-16")
    assert [(d.code, d.cell) for d, _ in python.findings] == [("TL002", 2)]
    julia = {"kernelspec": {"name": "julia-1.10", "language": "julia", "display_name": "Julia"}}
    other = server.lint_notebook(uri, NotebookState(cells, julia, (1,)), "utf-16")
    assert other.findings == [] and other.program is None
