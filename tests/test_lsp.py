"""`torchlint lsp` as an editor meets it: a real client speaking JSON-RPC to the server process.

pytest-lsp starts `python -m torchlint lsp` and drives it over stdio; every
test waits for the server's `textDocument/publishDiagnostics` notification
(never sleeps). Documents live in `tmp_path` under real `file://` URIs, so
the project configuration next to them applies.
"""

from __future__ import annotations

import asyncio
import re
import sys
import textwrap
from pathlib import Path
from typing import List, Optional

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features  # noqa: E402
from pygls.protocol import default_converter  # noqa: E402

from conftest import PROJECT_URLS  # noqa: E402
from torchlint.fix import fix_source  # noqa: E402
from torchlint.lsp import FIX_ALL_KIND  # noqa: E402
from torchlint.rules import ALL_RULES  # noqa: E402



def recording_client() -> LanguageClient:
    """pytest-lsp's test client, also keeping every publishDiagnostics in order (with its version).

    `wait_for_notification` holds one waiter per method and can miss a notification
    that arrives in the same read as the one it waited for; a log cannot.
    """
    client = LanguageClient(converter_factory=default_converter)
    client.published = []
    client.published_event = asyncio.Event()

    def publish_diagnostics(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append(params)
        client.published_event.set()

    # Like the editors whose capabilities the tests declare, it takes the server's `client/registerCapability`
    # requests (a file watcher, when it declares `didChangeWatchedFiles.dynamicRegistration`), and keeps them.
    client.registrations = []

    def register_capability(client: LanguageClient, params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)

    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES,
                                   types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish_diagnostics,
                                   types.CLIENT_REGISTER_CAPABILITY: register_capability})
    return client


SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "torchlint", "lsp"], client_factory=recording_client)
TIMEOUT = 60  # seconds: generous for a loaded CI machine; a passing run takes well under one
DOCS = PROJECT_URLS["Documentation"] + "{code}.md"

BUGGY = textwrap.dedent("""\
    import torch


    def train(model, loader, criterion, optimizer, accum):
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            if i % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
        optimizer.step()  # the gradients left after the last window: no TL010
        optimizer.zero_grad()
""")

FIXED = textwrap.dedent("""\
    import torch


    def train(model, loader, criterion, optimizer, accum):
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss = loss / accum
            loss.backward()
            if (i + 1) % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
        optimizer.step()  # the gradients left after the last window: no TL010
        optimizer.zero_grad()
""")

# The same, with the last, partial window also stepped inside the loop.
CLEAN = FIXED.replace("if (i + 1) % accum == 0:", "if (i + 1) % accum == 0 or (i + 1) == len(loader):")

# A non-BMP character (two UTF-16 code units, four UTF-8 bytes) before each finding.
EMOJI = textwrap.dedent("""\
    def train(model, loader, criterion, optimizer, accum, tag="🔥"):
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            tip = "🔥"; loss.backward()
            if tag != "😀" and i % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
""")

# No reset at all: TL002, whose fix (where to reset) is unsafe.
NO_ZERO_GRAD = textwrap.dedent("""\
    import torch

    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
""")


# --- client side helpers -----------------------------------------------------------


async def start(client: LanguageClient, root: Path, capabilities: str = "visual-studio-code") -> types.InitializeResult:
    return await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities(capabilities),
        root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
    ))


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    await start(lsp_client, tmp_path)
    yield
    await lsp_client.shutdown_session()


# A debounce of ten minutes: any publish a test sees came from linting at once, not after the delay.
PATIENT_SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "torchlint", "lsp", "--debounce-ms", "600000"],
                                    client_factory=recording_client)


@pytest_lsp.fixture(config=PATIENT_SERVER)
async def patient(lsp_client: LanguageClient, tmp_path: Path):
    await start(lsp_client, tmp_path)
    yield
    await lsp_client.shutdown_session()


# The server with LibCST made unimportable: answering `initialize` must not need the analysis, which is
# imported once the editor has its reply (see TorchlintLanguageServer.warm_up).
WITHOUT_LIBCST = ClientServerConfig(
    server_command=[sys.executable, "-c", "import sys, runpy; sys.modules['libcst'] = None; sys.argv[0] = 'torchlint'; "
                                          "runpy.run_module('torchlint', run_name='__main__')", "lsp"],
    client_factory=recording_client)


@pytest_lsp.fixture(config=WITHOUT_LIBCST)
async def without_libcst(lsp_client: LanguageClient):
    yield


@pytest_lsp.fixture(config=SERVER)
async def neovim(lsp_client: LanguageClient, tmp_path: Path):
    """A client that, like Neovim, prefers UTF-8 positions."""
    result = await start(lsp_client, tmp_path, "neovim")
    assert result.capabilities.position_encoding == types.PositionEncodingKind.Utf8
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def emacs(lsp_client: LanguageClient, tmp_path: Path):
    """A client that cannot resolve code actions (and takes versioned document edits)."""
    await start(lsp_client, tmp_path, "emacs")
    yield
    await lsp_client.shutdown_session()


def mark(client: LanguageClient) -> int:
    """Where the notifications that follow will start in `client.published`."""
    return len(client.published)


async def next_publish(client: LanguageClient, after: int, uri: str,
                       version: Optional[int] = None) -> types.PublishDiagnosticsParams:
    """The first publishDiagnostics for `uri` (and `version`, when given) since `after`."""

    async def wait() -> types.PublishDiagnosticsParams:
        index = after
        while True:
            while index < len(client.published):
                params = client.published[index]
                index += 1
                if params.uri == uri and (version is None or params.version == version):
                    return params
            client.published_event.clear()
            await client.published_event.wait()

    return await asyncio.wait_for(wait(), TIMEOUT)


async def published(client: LanguageClient, after: int, uri: str, version: Optional[int] = None) -> List[types.Diagnostic]:
    return list((await next_publish(client, after, uri, version)).diagnostics)


async def open_document(client: LanguageClient, path: Path, text: str, language_id: str = "python",
                        wait: bool = True) -> List[types.Diagnostic]:
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    start = mark(client)
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id=language_id, version=1, text=text),
    ))
    return await published(client, start, uri, 1) if wait else []


def change_document(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
    ))


async def code_actions(client: LanguageClient, uri: str, range_: types.Range,
                       only: Optional[List[str]] = None) -> List[types.CodeAction]:
    result = await asyncio.wait_for(client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=range_,
        context=types.CodeActionContext(diagnostics=[], only=only),
    )), TIMEOUT)
    return list(result or [])


def offset(text: str, position: types.Position, encoding: str = "utf-16") -> int:
    """A client's own reading of an LSP position (independent of the server's code)."""
    lines = re.split(r"(?<=\r\n)|(?<=\n)(?<!\r\n)|(?<=\r)(?!\n)", text)
    start = sum(len(line) for line in lines[: position.line])
    line = re.sub(r"(\r\n|\r|\n)$", "", lines[position.line]) if position.line < len(lines) else ""
    units = 0
    for index, char in enumerate(line):
        if units >= position.character:
            return start + index
        units += len(char.encode("utf-16-le")) // 2 if encoding == "utf-16" else len(char.encode(encoding))
    return start + len(line)


def text_edits(edit: types.WorkspaceEdit, uri: str) -> List[types.TextEdit]:
    if edit.document_changes:
        return [e for change in edit.document_changes if change.text_document.uri == uri for e in change.edits]
    return list((edit.changes or {}).get(uri, []))


def apply(text: str, edits: List[types.TextEdit], encoding: str = "utf-16") -> str:
    spans = sorted(((offset(text, e.range.start, encoding), offset(text, e.range.end, encoding), e.new_text)
                    for e in edits), reverse=True)
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text


def by_code(diagnostics: List[types.Diagnostic]) -> dict:
    return {d.code: d for d in diagnostics}


def rng(line: int, start: int, end: int) -> types.Range:
    return types.Range(start=types.Position(line=line, character=start), end=types.Position(line=line, character=end))


WHOLE = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=10_000, character=0))


# --- diagnostics -------------------------------------------------------------------


@pytest.mark.asyncio
async def test_diagnostics_on_open(client: LanguageClient, tmp_path: Path):
    diagnostics = await open_document(client, tmp_path / "train.py", BUGGY)
    found = by_code(diagnostics)
    assert sorted(found) == ["TL003", "TL004"]

    tl003 = found["TL003"]
    assert tl003.range == rng(6, 8, 23)  # `loss.backward()` on line 7
    assert tl003.severity == types.DiagnosticSeverity.Error
    assert tl003.source == "torchlint"
    assert tl003.code_description.href == DOCS.format(code="TL003")
    assert "not divided by `accum`" in tl003.message

    tl004 = found["TL004"]
    assert tl004.range == rng(7, 11, 25)  # `i % accum == 0` on line 8
    assert tl004.code_description.href == DOCS.format(code="TL004")
    assert {rule.code: rule.url() for rule in ALL_RULES}["TL004"] == tl004.code_description.href

    # What the loop does on a concrete run, as related information at the finding itself.
    (related,) = tl004.related_information
    assert related.location.uri == (tmp_path / "train.py").as_uri() and related.location.range == tl004.range
    assert related.message == (
        "timeline (accum = 4, an example value; an example run of 10 micro-batches): steps after micro-batches "
        "1, 5, 9 — windows of 1, 4, 4 (+1 left over)\nexpected: steps after micro-batches 4, 8, 10 — windows of "
        "4, 4, 2")


@pytest.mark.asyncio
async def test_a_syntax_error_is_shown_in_a_file_without_a_training_loop(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "utils.py"
    diagnostics = await open_document(client, path, "import torch\n\n\ndef f(:\n    return torch.zeros(3)\n")
    assert [(d.code, d.range.start, d.message) for d in diagnostics] == [
        ("TL000", types.Position(line=3, character=6), "SyntaxError: invalid syntax")]
    start = mark(client)
    change_document(client, path.as_uri(), 2, "import torch\n\n\ndef f():\n    return torch.zeros(3)\n")
    assert await published(client, start, path.as_uri(), 2) == []


@pytest.mark.asyncio
async def test_initialize_is_answered_before_the_analysis_is_imported(without_libcst: LanguageClient, tmp_path: Path):
    result = await start(without_libcst, tmp_path)
    assert result.server_info.name == "torchlint"
    assert FIX_ALL_KIND in result.capabilities.code_action_provider.code_action_kinds
    await without_libcst.shutdown_session()


@pytest.mark.asyncio
async def test_noqa_suppresses(client: LanguageClient, tmp_path: Path):
    text = BUGGY.replace("loss.backward()", "loss.backward()  # noqa: TL003")
    diagnostics = await open_document(client, tmp_path / "train.py", text)
    assert [d.code for d in diagnostics] == ["TL004"]


@pytest.mark.asyncio
async def test_change_that_fixes_the_code_clears_diagnostics(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "train.py"
    assert len(await open_document(client, path, BUGGY)) == 2
    start = mark(client)
    # Three keystrokes in a row: the first may be linted at once (it follows a pause); the next two
    # come faster than the debounce, so version 3 is never linted, and version 4 is published last.
    change_document(client, path.as_uri(), 2, BUGGY.replace("i % accum", "(i + 1) % accum"))
    change_document(client, path.as_uri(), 3, FIXED + "\n\n")
    change_document(client, path.as_uri(), 4, CLEAN)
    last = await next_publish(client, start, path.as_uri(), 4)
    assert list(last.diagnostics) == []
    versions = [params.version for params in client.published[start:] if params.uri == path.as_uri()]
    assert versions in ([4], [2, 4]), versions


@pytest.mark.asyncio
async def test_incremental_change(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "train.py"
    await open_document(client, path, BUGGY)
    start = mark(client)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=2),
        content_changes=[types.TextDocumentContentChangePartial(range=rng(7, 11, 12), text="(i + 1)")],
    ))
    # TL004 is fixed; TL003 is left.
    assert [d.code for d in await published(client, start, path.as_uri(), 2)] == ["TL003"]


@pytest.mark.asyncio
async def test_close_clears_diagnostics(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "train.py"
    await open_document(client, path, BUGGY)
    start = mark(client)
    client.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=path.as_uri())))
    assert await published(client, start, path.as_uri()) == []


@pytest.mark.asyncio
async def test_other_languages_are_ignored(client: LanguageClient, tmp_path: Path):
    notes = tmp_path / "notes.md"
    await open_document(client, notes, BUGGY, language_id="markdown", wait=False)
    # Lints run in the order documents open: had the markdown file been linted, its
    # diagnostics would have come first.
    start = mark(client)
    await open_document(client, tmp_path / "train.py", BUGGY)
    assert [params.uri for params in client.published[start:]] == [(tmp_path / "train.py").as_uri()]
    assert notes.as_uri() not in client.diagnostics
    assert await code_actions(client, notes.as_uri(), WHOLE) == []


# --- positions ---------------------------------------------------------------------


@pytest.mark.asyncio
async def test_utf16_positions(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "train.py"
    found = by_code(await open_document(client, path, EMOJI))
    # `        tip = "🔥"; ` is 19 code points and 20 UTF-16 code units.
    assert found["TL003"].range == rng(3, 20, 35)
    # `        if tag != "😀" and ` is 26 code points and 27 UTF-16 code units.
    assert found["TL004"].range == rng(4, 27, 41)
    lines = EMOJI.splitlines()
    assert lines[3].encode("utf-16-le")[40:70].decode("utf-16-le") == "loss.backward()"

    actions = await code_actions(client, path.as_uri(), found["TL003"].range, only=["quickfix"])
    assert len(actions) == 1
    fixed_line = apply(EMOJI, text_edits(actions[0].edit, path.as_uri())).splitlines()[3]
    assert fixed_line == '        tip = "🔥"; (loss / accum).backward()'


@pytest.mark.asyncio
async def test_utf8_positions_when_negotiated(neovim: LanguageClient, tmp_path: Path):
    path = tmp_path / "train.py"
    found = by_code(await open_document(neovim, path, EMOJI))
    # The emoji is four UTF-8 bytes.
    assert found["TL003"].range == rng(3, 22, 37)
    assert found["TL004"].range == rng(4, 29, 43)
    actions = await code_actions(neovim, path.as_uri(), found["TL004"].range, only=["quickfix"])
    fixed = apply(EMOJI, text_edits(actions[0].edit, path.as_uri()), encoding="utf-8")
    assert 'if tag != "😀" and (i + 1) % accum == 0:' in fixed


# --- code actions ------------------------------------------------------------------


@pytest.mark.asyncio
async def test_quickfix_actions(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "train.py"
    found = by_code(await open_document(client, path, BUGGY))
    uri = path.as_uri()

    # A cursor on the backward line: only that finding's fix (and the document's fix-all).
    cursor = types.Range(start=types.Position(line=6, character=12), end=types.Position(line=6, character=12))
    actions = await code_actions(client, uri, cursor)
    quickfixes = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert [a.title for a in quickfixes] == ["Divide `loss` by `accum` before `backward()`"]
    action = quickfixes[0]
    assert action.is_preferred is True
    assert list(action.diagnostics) == [found["TL003"]]
    assert apply(BUGGY, text_edits(action.edit, uri)) == BUGGY.replace(
        "        loss.backward()", "        loss = loss / accum\n        loss.backward()")

    # Both fixes, applied one after the other, give the fixed program.
    actions = await code_actions(client, uri, WHOLE, only=[types.CodeActionKind.QuickFix])
    assert sorted(a.title for a in actions) == ["Divide `loss` by `accum` before `backward()`",
                                                "Use `(i + 1) % accum`"]
    edits = [e for a in actions for e in text_edits(a.edit, uri)]
    assert apply(BUGGY, edits) == FIXED

    # Nothing where there is no finding.
    assert await code_actions(client, uri, rng(0, 0, 3)) == []


@pytest.mark.asyncio
async def test_light_bulb_fix_all_is_resolved_on_demand(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "train.py"
    found = by_code(await open_document(client, path, BUGGY))
    uri = path.as_uri()
    actions = await code_actions(client, uri, found["TL004"].range)
    assert [a.kind for a in actions] == ["quickfix", "source.fixAll.torchlint"]
    fix_all = actions[1]
    assert fix_all.edit is None  # VS Code resolves edits: no whole-file fix on every cursor move
    resolved = await asyncio.wait_for(client.code_action_resolve_async(fix_all), TIMEOUT)
    assert apply(BUGGY, text_edits(resolved.edit, uri)) == FIXED


@pytest.mark.asyncio
async def test_light_bulb_fix_all_without_resolve_support(emacs: LanguageClient, tmp_path: Path):
    path = tmp_path / "train.py"
    found = by_code(await open_document(emacs, path, BUGGY))
    actions = await code_actions(emacs, path.as_uri(), found["TL003"].range)
    fix_all = [a for a in actions if a.kind == "source.fixAll.torchlint"]
    assert len(fix_all) == 1
    assert fix_all[0].edit.document_changes[0].text_document.version == 1
    assert apply(BUGGY, text_edits(fix_all[0].edit, path.as_uri())) == FIXED


@pytest.mark.asyncio
async def test_fix_all_source_action(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "train.py"
    await open_document(client, path, BUGGY)
    uri = path.as_uri()
    # What VS Code asks on save with "editor.codeActionsOnSave": {"source.fixAll": "explicit"}.
    actions = await code_actions(client, uri, rng(0, 0, 0), only=[types.CodeActionKind.SourceFixAll])
    assert [(a.title, a.kind) for a in actions] == [("Fix all torchlint problems", "source.fixAll.torchlint")]
    fixed = apply(BUGGY, text_edits(actions[0].edit, uri))
    assert fixed == FIXED == fix_source(BUGGY, str(path), ALL_RULES).source

    # Asking for quick fixes only, or for another kind, leaves it out.
    assert all(a.kind == "quickfix" for a in await code_actions(client, uri, WHOLE, only=["quickfix"]))
    assert await code_actions(client, uri, WHOLE, only=["refactor"]) == []

    # Nothing left to repair: no fix-all.
    start = mark(client)
    change_document(client, uri, 2, FIXED)
    assert [d.code for d in await published(client, start, uri, 2)] == []
    assert await code_actions(client, uri, WHOLE, only=["source"]) == []


@pytest.mark.asyncio
async def test_unsafe_fix_is_labelled_and_left_out_of_fix_all(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "train.py"
    found = by_code(await open_document(client, path, NO_ZERO_GRAD))
    assert "TL002" in found
    actions = await code_actions(client, path.as_uri(), found["TL002"].range)
    unsafe = [a for a in actions if a.kind == "quickfix" and list(a.diagnostics) == [found["TL002"]]]
    assert len(unsafe) == 1
    assert unsafe[0].title.endswith(" (unsafe)")
    assert not unsafe[0].is_preferred
    assert "zero_grad()" in apply(NO_ZERO_GRAD, text_edits(unsafe[0].edit, path.as_uri()))
    # Fix-all applies safe fixes only: nothing here.
    assert await code_actions(client, path.as_uri(), WHOLE, only=["source.fixAll"]) == []


# --- configuration -----------------------------------------------------------------


@pytest.mark.asyncio
async def test_project_configuration_is_respected(client: LanguageClient, tmp_path: Path):
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    pyproject = project / "pyproject.toml"
    pyproject.write_text('[tool.torchlint]\nignore = ["TL004"]\n', encoding="utf-8")
    path = project / "src" / "train.py"
    assert [d.code for d in await open_document(client, path, BUGGY)] == ["TL003"]

    # The configuration is read afresh: edit it, save the document, and TL004 is back.
    pyproject.write_text('[tool.torchlint]\nignore = ["TL003"]\n', encoding="utf-8")
    start = mark(client)
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=path.as_uri())))
    assert [d.code for d in await published(client, start, path.as_uri(), 1)] == ["TL004"]


@pytest.mark.asyncio
async def test_bad_configuration_is_shown_once(client: LanguageClient, tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nignore = ["TL999"]\n', encoding="utf-8")
    assert await open_document(client, tmp_path / "a.py", BUGGY) == []
    assert await open_document(client, tmp_path / "b.py", BUGGY) == []
    shown = [m for m in client.messages if "TL999" in m.message]
    assert len(shown) == 1
    assert shown[0].type == types.MessageType.Error
    assert "pyproject.toml" in shown[0].message


# --- in-process units ----------------------------------------------------------------


def test_position_map_counts_code_units():
    from torchlint.lsp import PositionMap

    text = 'a = "😀é"; b\r\nsecond\rthird\n'
    utf16 = PositionMap(text, "utf-16")
    # `b` follows 10 code points, one of them (the emoji) two UTF-16 units and four UTF-8 bytes,
    # one (`é`) one UTF-16 unit and two UTF-8 bytes.
    assert utf16.position(1, 11) == types.Position(line=0, character=11)
    assert utf16.position(2, 1) == types.Position(line=1, character=0)  # CRLF is one break
    assert utf16.position(3, 6) == types.Position(line=2, character=5)  # so is a lone CR
    assert utf16.position(9, 1) == utf16.end() == types.Position(line=3, character=0)
    assert PositionMap(text, "utf-8").position(1, 11) == types.Position(line=0, character=14)
    assert PositionMap(text, "utf-32").position(1, 11) == types.Position(line=0, character=10)


def test_a_crash_while_linting_is_logged_not_raised(monkeypatch, tmp_path: Path):
    import torchlint.engine
    from torchlint.lsp import build_server

    def explode(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(torchlint.engine, "lint_source", explode)
    server = build_server()
    snapshot = server.lint((tmp_path / "train.py").as_uri(), BUGGY, 1, "utf-16")
    assert snapshot.findings == []
    assert any("boom" in message for _, message, _ in snapshot.messages)


def test_lsp_is_not_imported_by_the_command_line():
    import subprocess

    code = "import sys, torchlint.cli; print('pygls' in sys.modules, 'torchlint.lsp' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]


@pytest.mark.asyncio
async def test_a_change_after_a_pause_is_linted_at_once_not_after_the_debounce(patient: LanguageClient,
                                                                               tmp_path: Path):
    path = tmp_path / "train.py"
    assert len(await open_document(patient, path, BUGGY)) == 2
    await asyncio.sleep(0.2)
    start = mark(patient)
    change_document(patient, path.as_uri(), 2, CLEAN)
    assert await published(patient, start, path.as_uri(), 2) == []
