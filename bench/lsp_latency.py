"""How long an editor waits for torchlint's diagnostics after an edit.

Starts `python -m torchlint lsp` as a subprocess, speaks LSP to it with pygls'
own client (pygls is a runtime dependency: nothing else to install), opens a
generated ~1,000-line training script (data helpers, models, several training
loops, some of them buggy) and makes edits one at a time, like a person who
edits, then pauses to read the findings (`--pause-ms`, 400 by default). For
each edit it measures the wall time from sending `textDocument/didChange` to
receiving the `textDocument/publishDiagnostics` of that very version, then
prints the median and the 90th percentile.

Before that, it starts the server `--starts` times (5 by default) the way an
editor does when a Python file is opened: start the process, `initialize`,
`initialized`, `didOpen`; and prints the medians from starting the process to
the `initialize` reply, and to the first `publishDiagnostics` (the moment the
user sees findings).

The server lints a change at once when it follows a pause, and waits for its
debounce delay (150 ms by default) while changes keep coming faster than that:
with `--pause-ms 0` the edits come back to back and the debounce is part of
most figures. `--debounce-ms` passes another delay to the server. The
in-process time of one full `lint_source` call (no incremental parse) on the
same text is printed for comparison.

    python bench/lsp_latency.py                 # 20 edits on ~1,000 lines
    python bench/lsp_latency.py --edits 50 --debounce-ms 0
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from lsprotocol import types
from pygls.lsp.client import LanguageClient

HEADER = '''\
"""Training experiments: image classifier, sequence model, GAN and fine-tuning."""

import math
import os
import random
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import GradScaler, autocast
from torch.utils.data import DataLoader, Dataset


@dataclass
class Config:
    lr: float = 3e-4
    epochs: int = 10
    batch_size: int = 32
    accum_steps: int = 4
    clip: float = 1.0
    log_every: int = 50
    device: str = "cuda" if torch.cuda.is_available() else "cpu"


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
'''

# One "module" of helpers, a model and two or three loops; {k} makes names unique.
BLOCK = '''

class SyntheticDataset{k}(Dataset):
    def __init__(self, n, dim, classes):
        self.x = torch.randn(n, dim)
        self.y = torch.randint(0, classes, (n,))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index], self.y[index]


class ResidualBlock{k}(nn.Module):
    def __init__(self, width, dropout=0.1):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, 4 * width)
        self.fc2 = nn.Linear(4 * width, width)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        h = self.fc2(self.drop(F.gelu(self.fc1(self.norm(x)))))
        return x + h


class Classifier{k}(nn.Module):
    def __init__(self, dim, width, classes, depth=3):
        super().__init__()
        self.embed = nn.Linear(dim, width)
        self.blocks = nn.ModuleList([ResidualBlock{k}(width) for _ in range(depth)])
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        h = self.embed(x)
        for block in self.blocks:
            h = block(h)
        return self.head(h)


def make_loader{k}(cfg, n=1024, dim=64, classes=10):
    dataset = SyntheticDataset{k}(n, dim, classes)
    return DataLoader(dataset, batch_size=cfg.batch_size, shuffle=True)


def accuracy{k}(logits, y):
    return (logits.argmax(dim=-1) == y).float().mean().item()


def save_checkpoint{k}(model, optimizer, epoch, path):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    torch.save({{"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}}, path)


def evaluate{k}(model, loader, device):
    model.eval()
    total, correct = 0, 0.0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            correct += accuracy{k}(logits, y) * len(y)
            total += len(y)
    model.train()
    return correct / max(total, 1)


def train_plain{k}(cfg, model, loader):
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(cfg.epochs):
        for step, (x, y) in enumerate(loader):
            x, y = x.to(cfg.device), y.to(cfg.device)
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
            optimizer.step()
            if step % cfg.log_every == 0:
                print(f"epoch {{epoch}} step {{step}} loss {{loss.item():.4f}}")
    return model


def train_accumulated{k}(cfg, model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    accum = cfg.accum_steps
    for epoch in range(cfg.epochs):
        for i, (x, y) in enumerate(loader):
            x, y = x.to(cfg.device), y.to(cfg.device)
            loss = criterion(model(x), y)
            loss.backward()
            if i % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
    return model


def train_amp{k}(cfg, model, loader):
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg.epochs)
    scaler = GradScaler()
    criterion = nn.CrossEntropyLoss()
    history = []
    for epoch in range(cfg.epochs):
        for x, y in loader:
            x, y = x.to(cfg.device), y.to(cfg.device)
            optimizer.zero_grad()
            with autocast():
                loss = criterion(model(x), y)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
            scaler.step(optimizer)
            scaler.update()
            history.append(loss.item())
        scheduler.step()
    return history
'''


def generate(target_lines: int = 1000) -> str:
    parts = [HEADER]
    k = 0
    while sum(part.count("\n") for part in parts) < target_lines - 40:
        parts.append(BLOCK.format(k=k))
        k += 1
    parts.append(textwrap.dedent('''

        def main():
            cfg = Config()
            set_seed(0)
            model = Classifier0(64, 128, 10).to(cfg.device)
            loader = make_loader0(cfg)
            train_plain0(cfg, model, loader)
            train_accumulated0(cfg, model, loader)
            print(evaluate0(model, loader, cfg.device))


        if __name__ == "__main__":
            main()
    '''))
    return "".join(parts)


def edits_for(text: str, count: int) -> List[Tuple[int, int, int, str]]:
    """`count` single-line edits (line, start, end, new text) a person might make, spread over the file.

    They alternate between fixing and re-introducing the accumulation bugs of
    different loops (the diagnostics really change) and harmless edits elsewhere.
    """
    lines = text.split("\n")
    buggy_backward = [i for i, line in enumerate(lines) if line == "            loss.backward()"
                      and lines[i + 1].strip() == "if i % accum == 0:"]
    conditions = [i for i, line in enumerate(lines) if line.strip() == "if i % accum == 0:"]
    prints = [i for i, line in enumerate(lines) if "print(f\"epoch" in line]
    edits = []
    for n in range(count):
        kind = n % 4
        if kind == 0 and buggy_backward:
            row = buggy_backward[(n // 4) % len(buggy_backward)]
            old = lines[row]
            new = "            (loss / accum).backward()" if old.strip() == "loss.backward()" else \
                "            loss.backward()"
        elif kind == 1 and conditions:
            row = conditions[(n // 4) % len(conditions)]
            old = lines[row]
            new = old.replace("i % accum", "(i + 1) % accum") if "(i + 1)" not in old else \
                old.replace("(i + 1) % accum", "i % accum")
        elif kind == 2 and prints:
            row = prints[(n // 4) % len(prints)]
            old = lines[row]
            new = old.replace("loss {loss.item():.4f}", "loss={loss.item():.3f}") if ":.4f" in old else \
                old.replace("loss={loss.item():.3f}", "loss {loss.item():.4f}")
        else:
            row = 20 + n % 5  # inside Config: a new default
            old = lines[row]
            new = old.replace("= ", "=  ", 1) if "=  " not in old else old.replace("=  ", "= ", 1)
        lines[row] = new
        edits.append((row, 0, len(old), new))
    return edits


def apply_edit(text: str, edit: Tuple[int, int, int, str]) -> str:
    row, start, end, new = edit
    lines = text.split("\n")
    lines[row] = lines[row][:start] + new + lines[row][end:]
    return "\n".join(lines)


class Bench:
    def __init__(self) -> None:
        self.client = LanguageClient("torchlint-bench", "1")
        self.waiters: Dict[Tuple[str, Optional[int]], asyncio.Future] = {}
        self.counts: Dict[Tuple[str, Optional[int]], int] = {}

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: types.PublishDiagnosticsParams) -> None:
            key = (params.uri, params.version)
            self.counts[key] = len(params.diagnostics)
            future = self.waiters.pop(key, None)
            if future is not None and not future.done():
                future.set_result(time.perf_counter())

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def on_log(params: types.LogMessageParams) -> None:
            print(f"server: {params.message}", file=sys.stderr)

        @self.client.feature(types.WINDOW_SHOW_MESSAGE)
        def on_show(params: types.ShowMessageParams) -> None:
            print(f"server: {params.message}", file=sys.stderr)

    def expect(self, uri: str, version: int) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        self.waiters[(uri, version)] = future
        return future


def server_command(debounce_ms: Optional[float]) -> List[str]:
    command = [sys.executable, "-m", "torchlint", "lsp"]
    return command + (["--debounce-ms", str(debounce_ms)] if debounce_ms is not None else [])


async def start_up(text: str, debounce_ms: Optional[float], timeout: float) -> Tuple[float, float]:
    """Start a server, initialize it and open `text`: ms from the start to the `initialize` reply, and to the
    first publishDiagnostics."""
    bench = Bench()
    client = bench.client
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "experiments.py"
        path.write_text(text, encoding="utf-8")
        started = time.perf_counter()
        await client.start_io(*server_command(debounce_ms))
        await client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(), root_uri=Path(folder).as_uri(), process_id=None))
        initialized = time.perf_counter()
        client.initialized(types.InitializedParams())
        waiting = bench.expect(path.as_uri(), 1)
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=path.as_uri(), language_id="python", version=1, text=text)))
        published = await asyncio.wait_for(waiting, timeout)
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
    return (initialized - started) * 1000, (published - started) * 1000


async def run(lines: int, count: int, debounce_ms: Optional[float], timeout: float, pause_ms: float = 400,
              json_path: Optional[str] = None, starts: int = 5) -> int:
    text = generate(lines)
    start_ups = [await start_up(text, debounce_ms, timeout) for _ in range(starts)]
    if start_ups:
        initialize_ms = statistics.median(ms for ms, _ in start_ups)
        first_publish_ms = statistics.median(ms for _, ms in start_ups)
        print(f"server start -> initialize reply: median {initialize_ms:.0f} ms; "
              f"-> first publishDiagnostics (didOpen at once): median {first_publish_ms:.0f} ms "
              f"({starts} starts: {', '.join(f'{a:.0f}/{b:.0f}' for a, b in start_ups)} ms)")
    bench = Bench()
    client = bench.client
    command = server_command(debounce_ms)
    started = time.perf_counter()
    await client.start_io(*command)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "experiments.py"
        path.write_text(text, encoding="utf-8")
        uri = path.as_uri()
        await client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(), root_uri=Path(folder).as_uri(), process_id=None))
        client.initialized(types.InitializedParams())
        ready = time.perf_counter()

        waiting = bench.expect(uri, 1)
        sent = time.perf_counter()
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
        open_ms = (await asyncio.wait_for(waiting, timeout) - sent) * 1000
        print(f"document: {text.count(chr(10))} lines, {len(text):,} characters; "
              f"{bench.counts[(uri, 1)]} findings on open")
        print(f"server start + initialize: {(ready - started) * 1000:.0f} ms; "
              f"didOpen -> publishDiagnostics: {open_ms:.0f} ms")

        latencies = []
        for n, edit in enumerate(edits_for(text, count)):
            await asyncio.sleep(pause_ms / 1000)  # the person reads the findings before typing again
            version = n + 2
            text = apply_edit(text, edit)
            row, start, end, new = edit
            waiting = bench.expect(uri, version)
            sent = time.perf_counter()
            client.text_document_did_change(types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangePartial(
                    range=types.Range(start=types.Position(line=row, character=start),
                                      end=types.Position(line=row, character=end)),
                    text=new)],
            ))
            latency = (await asyncio.wait_for(waiting, timeout) - sent) * 1000
            latencies.append(latency)
            print(f"  edit {n + 1:2d} (line {row + 1:4d}): {latency:6.1f} ms, "
                  f"{bench.counts[(uri, version)]} findings")

        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()

    from torchlint.engine import lint_source
    from torchlint.rules import ALL_RULES

    lint_ms = []
    for _ in range(5):
        begin = time.perf_counter()
        lint_source(text, "experiments.py", ALL_RULES)
        lint_ms.append((time.perf_counter() - begin) * 1000)

    ordered = sorted(latencies)
    p90 = ordered[max(0, -(-len(ordered) * 9 // 10) - 1)]  # nearest-rank 90th percentile
    delay = "150 (default)" if debounce_ms is None else f"{debounce_ms:g}"
    print(f"\ndidChange -> publishDiagnostics over {len(latencies)} edits "
          f"(server debounce {delay} ms, {pause_ms:g} ms pause before each edit):")
    print(f"  median {statistics.median(latencies):.1f} ms   p90 {p90:.1f} ms   "
          f"min {ordered[0]:.1f} ms   max {ordered[-1]:.1f} ms")
    print(f"in-process lint_source of the same text: median {statistics.median(lint_ms):.1f} ms")
    if json_path:
        figures = {
            "document_lines": text.count("\n"), "edits": len(latencies), "pause_ms": pause_ms,
            "debounce_ms": 150 if debounce_ms is None else debounce_ms,
            "median_ms": statistics.median(latencies), "p90_ms": p90, "min_ms": ordered[0], "max_ms": ordered[-1],
            "latencies_ms": latencies, "startup_ms": (ready - started) * 1000, "open_ms": open_ms,
            "starts": starts, "start_to_initialize_ms": initialize_ms if start_ups else None,
            "start_to_first_publish_ms": first_publish_ms if start_ups else None, "start_ups_ms": start_ups,
            "lint_source_ms": statistics.median(lint_ms),
        }
        Path(json_path).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1000, help="size of the generated file (default: 1000)")
    parser.add_argument("--edits", type=int, default=20, help="number of didChange edits (default: 20)")
    parser.add_argument("--debounce-ms", type=float, default=None, help="pass a debounce delay to the server")
    parser.add_argument("--timeout", type=float, default=60, help="seconds to wait for one publish")
    parser.add_argument("--pause-ms", type=float, default=400, help="pause before each edit (default: 400)")
    parser.add_argument("--starts", type=int, default=5,
                        help="server start-ups to time, to initialize and to the first diagnostics (default: 5)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures to PATH as JSON")
    args = parser.parse_args(argv)
    return asyncio.run(run(args.lines, args.edits, args.debounce_ms, args.timeout, args.pause_ms, args.json,
                           args.starts))


if __name__ == "__main__":
    sys.exit(main())
