"""`torchlint lsp` across the files of a project, as an editor meets it (issue 18).

A loop's findings can rest on another file of the project: `engine.py` calls `loss_scaler(...)`, whose
`__call__` in `util/misc.py` runs the backward and, when `update_grad` holds, the step. The server reads
the unsaved text of the documents open in the editor in place of the disk's, and lints again the open
documents whose last lint rested on a file that changed (edited, closed, saved, or changed on disk and
reported by `workspace/didChangeWatchedFiles`), and no other.
"""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path
from typing import List

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from test_lsp import BUGGY, TIMEOUT, mark, next_publish, recording_client  # noqa: E402

ENGINE = textwrap.dedent('''\
    import math
    import sys

    import torch


    def train_one_epoch(model, criterion, data_loader, optimizer, device, epoch, loss_scaler, args=None):
        model.train(True)
        accum_iter = args.accum_iter
        optimizer.zero_grad()
        for data_iter_step, (samples, targets) in enumerate(data_loader):
            samples = samples.to(device, non_blocking=True)
            targets = targets.to(device, non_blocking=True)
            with torch.cuda.amp.autocast():
                outputs = model(samples)
                loss = criterion(outputs, targets)
            loss_value = loss.item()
            if not math.isfinite(loss_value):
                sys.exit(1)
            loss_scaler(loss, optimizer, parameters=model.parameters(),
                        update_grad=(data_iter_step + 1) % accum_iter == 0)
            if (data_iter_step + 1) % accum_iter == 0:
                optimizer.zero_grad()
        return loss_value
''')

MAIN = textwrap.dedent('''\
    import torch
    import torch.nn as nn

    from engine import train_one_epoch
    from util.misc import NativeScalerWithGradNormCount as NativeScaler


    def main(args):
        device = torch.device(args.device)
        model = build_model(args).to(device)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
        loss_scaler = NativeScaler()
        data_loader = build_loader(args)
        for epoch in range(args.epochs):
            train_one_epoch(model, criterion, data_loader, optimizer, device, epoch, loss_scaler, args=args)
''')

# The scaler steps only when `update_grad` holds: engine.py accumulates (TL003: the loss is not divided;
# TL010: the last, partial window is never stepped).
MISC = textwrap.dedent('''\
    import torch


    class NativeScalerWithGradNormCount:
        def __init__(self):
            self._scaler = torch.cuda.amp.GradScaler()

        def __call__(self, loss, optimizer, parameters=None, update_grad=True):
            self._scaler.scale(loss).backward()
            if update_grad:
                self._scaler.step(optimizer)
                self._scaler.update()
''')

# The same scaler stepping on every call: engine.py does not accumulate, and has nothing to report.
MISC_ALWAYS_STEPS = MISC.replace("        if update_grad:\n", "        if True:\n")

ACCUMULATING = ["TL003", "TL010"]
OTHER_CODES = ["TL003", "TL004"]  # data.py's own loop


SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "torchlint", "lsp"], client_factory=recording_client)


def write_project(root: Path) -> dict:
    (root / ".git").mkdir()
    (root / "util").mkdir()
    (root / "util" / "__init__.py").write_text("")
    files = {"engine": root / "engine.py", "main": root / "main.py", "misc": root / "util" / "misc.py",
             "other": root / "data.py"}
    files["engine"].write_text(ENGINE)
    files["main"].write_text(MAIN)
    files["misc"].write_text(MISC)
    files["other"].write_text(BUGGY)  # a loop of its own, resting on no other file
    return files


async def start(client: LanguageClient, root: Path, capabilities: str) -> None:
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities(capabilities), root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)]))


@pytest_lsp.fixture(config=SERVER)
async def vscode(lsp_client: LanguageClient, tmp_path: Path):
    """A client that registers file watchers at run time (`didChangeWatchedFiles.dynamicRegistration`)."""
    await start(lsp_client, tmp_path, "visual-studio-code")
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def neovim(lsp_client: LanguageClient, tmp_path: Path):
    """A client that declares no dynamic registration of file watchers."""
    await start(lsp_client, tmp_path, "neovim")
    yield
    await lsp_client.shutdown_session()


def codes(params: types.PublishDiagnosticsParams) -> List[str]:
    return sorted(str(d.code) for d in params.diagnostics)


async def open_file(client: LanguageClient, path: Path, text: str) -> types.PublishDiagnosticsParams:
    after = mark(client)
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=path.as_uri(), language_id="python", version=1, text=text)))
    return await next_publish(client, after, path.as_uri(), 1)


def publishes(client: LanguageClient, after: int, path: Path) -> List[types.PublishDiagnosticsParams]:
    return [params for params in client.published[after:] if params.uri == path.as_uri()]


def relinted(client: LanguageClient) -> List[str]:
    return [message.message for message in client.log_messages if "linting again" in message.message]


@pytest.mark.asyncio
async def test_an_unsaved_edit_of_a_helper_changes_the_loop_and_closing_it_restores_the_disk(
        vscode: LanguageClient, tmp_path: Path):
    lsp_client = vscode
    files = write_project(tmp_path)
    start = mark(lsp_client)
    assert codes(await open_file(lsp_client, files["engine"], ENGINE)) == ACCUMULATING
    assert codes(await open_file(lsp_client, files["other"], BUGGY)) == OTHER_CODES
    # Opened with the disk's text, util/misc.py changes nothing: engine.py is not linted again.
    await open_file(lsp_client, files["misc"], MISC)
    assert len(publishes(lsp_client, start, files["engine"])) == 1

    # The editor's text, unsaved, steps on every call: engine.py no longer accumulates.
    after = mark(lsp_client)
    lsp_client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=files["misc"].as_uri(), version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=MISC_ALWAYS_STEPS)]))
    assert codes(await next_publish(lsp_client, after, files["engine"].as_uri())) == []
    assert files["misc"].read_text() == MISC  # nothing was saved

    # Closed without saving: the disk's util/misc.py counts again.
    after = mark(lsp_client)
    lsp_client.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=files["misc"].as_uri())))
    assert codes(await next_publish(lsp_client, after, files["engine"].as_uri())) == ACCUMULATING

    # data.py rests on no other file: linted once, on open, and never again.
    assert len(publishes(lsp_client, start, files["other"])) == 1
    messages = relinted(lsp_client)
    assert len(messages) == 2 and all(files["engine"].as_uri() in m and "data.py" not in m for m in messages)


@pytest.mark.asyncio
async def test_a_helper_changed_on_disk_relints_the_loop_through_watched_files(
        vscode: LanguageClient, tmp_path: Path):
    lsp_client = vscode
    files = write_project(tmp_path)
    start = mark(lsp_client)
    assert codes(await open_file(lsp_client, files["engine"], ENGINE)) == ACCUMULATING
    assert codes(await open_file(lsp_client, files["other"], BUGGY)) == OTHER_CODES
    watched = [r for r in lsp_client.registrations if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES]
    assert len(watched) == 1

    files["misc"].write_text(MISC_ALWAYS_STEPS)
    after = mark(lsp_client)
    lsp_client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=files["misc"].as_uri(), type=types.FileChangeType.Changed)]))
    assert codes(await next_publish(lsp_client, after, files["engine"].as_uri())) == []

    # and back: the old text on disk again gives the old findings
    files["misc"].write_text(MISC)
    after = mark(lsp_client)
    lsp_client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=files["misc"].as_uri(), type=types.FileChangeType.Changed)]))
    assert codes(await next_publish(lsp_client, after, files["engine"].as_uri())) == ACCUMULATING
    assert len(publishes(lsp_client, start, files["other"])) == 1


@pytest.mark.asyncio
async def test_an_unsaved_edit_of_the_file_handing_the_scaler_changes_the_loop(
        vscode: LanguageClient, tmp_path: Path):
    lsp_client = vscode
    """main.py hands engine.py its scaler: handing it none (the parameter's default) leaves what it runs unknown."""
    files = write_project(tmp_path)
    assert codes(await open_file(lsp_client, files["engine"], ENGINE)) == ACCUMULATING
    await open_file(lsp_client, files["main"], MAIN)
    after = mark(lsp_client)
    unknown = MAIN.replace("    loss_scaler = NativeScaler()\n", "    loss_scaler = make_scaler(args)\n")
    lsp_client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=files["main"].as_uri(), version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=unknown)]))
    assert codes(await next_publish(lsp_client, after, files["engine"].as_uri())) == []


@pytest.mark.asyncio
async def test_no_watcher_is_registered_with_a_client_that_cannot_take_one(
        neovim: LanguageClient, tmp_path: Path):
    lsp_client = neovim
    files = write_project(tmp_path)
    assert codes(await open_file(lsp_client, files["engine"], ENGINE)) == ACCUMULATING
    await asyncio.sleep(0)
    assert lsp_client.registrations == []


# The scaler before it runs any backward: engine.py has no backward of its own, so nothing of it trains.
MISC_NO_BACKWARD = MISC.replace("        self._scaler.scale(loss).backward()\n", "        self._scaler.scale(loss)\n")


@pytest.mark.asyncio
async def test_a_helper_gaining_its_first_backward_relints_a_loop_that_rested_on_nothing(
        vscode: LanguageClient, tmp_path: Path):
    """engine.py's last lint rested on no other file (util/misc.py ran no backward, so nothing trained): once the
    editor's unsaved util/misc.py runs one, engine.py is linted again and its accumulation is found; when the
    backward is taken out again, the findings go."""
    lsp_client = vscode
    files = write_project(tmp_path)
    files["misc"].write_text(MISC_NO_BACKWARD)
    assert codes(await open_file(lsp_client, files["engine"], ENGINE)) == []
    await open_file(lsp_client, files["misc"], MISC_NO_BACKWARD)

    after = mark(lsp_client)
    lsp_client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=files["misc"].as_uri(), version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=MISC)]))
    assert codes(await next_publish(lsp_client, after, files["engine"].as_uri())) == ACCUMULATING
    assert any("misc.py changed what runs a backward" in m and files["engine"].as_uri() in m
               for m in relinted(lsp_client))

    after = mark(lsp_client)
    lsp_client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=files["misc"].as_uri(), version=3),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=MISC_NO_BACKWARD)]))
    assert codes(await next_publish(lsp_client, after, files["engine"].as_uri())) == []


@pytest.mark.asyncio
async def test_a_helper_gaining_its_first_backward_on_disk_relints_the_loop(vscode: LanguageClient, tmp_path: Path):
    lsp_client = vscode
    files = write_project(tmp_path)
    files["misc"].write_text(MISC_NO_BACKWARD)
    assert codes(await open_file(lsp_client, files["engine"], ENGINE)) == []
    files["misc"].write_text(MISC)
    after = mark(lsp_client)
    lsp_client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=files["misc"].as_uri(), type=types.FileChangeType.Changed)]))
    assert codes(await next_publish(lsp_client, after, files["engine"].as_uri())) == ACCUMULATING
