"""The language server's incremental parse gives exactly the module a full parse gives."""

from __future__ import annotations

import ast
import os
import random
import sys
from pathlib import Path

import libcst as cst
import pytest

from torchlint.engine import _statement_lines, lint_source
from torchlint.incremental import IncrementalParser
from torchlint.rules import ALL_RULES

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from lsp_latency import apply_edit, edits_for, generate  # noqa: E402

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.py"))


def parse_both(parser: IncrementalParser, text: str):
    try:
        lines = _statement_lines(ast.parse(text))
    except SyntaxError:
        lines = None
    try:
        full = cst.parse_module(text)
    except cst.ParserSyntaxError:
        with pytest.raises(cst.ParserSyntaxError):
            parser.parse(text, lines)
        return None, None
    return parser.parse(text, lines), full


def random_edit(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    index = rng.randrange(len(lines))
    line = lines[index]
    indent = line[: len(line) - len(line.lstrip())]
    choice = rng.randrange(7)
    if choice == 0:
        lines.insert(index, f"{indent}x_{rng.randrange(99)} = {rng.randrange(9)}\n")
    elif choice == 1:
        del lines[index]
    elif choice == 2:
        lines.insert(index, f"{indent}# note {rng.randrange(99)}\n")
    elif choice == 3:
        lines.insert(index, "\n")
    elif choice == 4:
        lines[index] = line.replace("loss", "total", 1)
    elif choice == 5:
        lines.insert(index, "def helper():\n    return 1\n")
    else:
        lines[index] = line.rstrip("\n") + "  # edited\n"
    return "".join(lines)


@pytest.mark.parametrize("seed", range(int(os.environ.get("TORCHLINT_INCREMENTAL_SEEDS", "4"))))
def test_random_edits_parse_exactly_like_a_full_parse(seed):
    rng = random.Random(seed)
    text = generate(400) if seed % 2 else EXAMPLES[seed % len(EXAMPLES)].read_text()
    parser = IncrementalParser()
    spliced = 0
    for _ in range(60):
        edited = random_edit(text, rng)
        try:
            ast.parse(edited)
        except SyntaxError:
            continue  # typing through broken states is covered below; here every version parses
        text = edited
        incremental, full = parse_both(parser, text)
        assert incremental.code == text
        assert incremental.deep_equals(full)
        spliced += parser.spliced
    assert spliced >= (20 if seed % 2 else 3), spliced  # the splice really ran, not only the fallback


def test_typing_session_keeps_findings_identical_to_a_fresh_lint():
    text = generate(1000)
    parser = IncrementalParser()
    lint_source(text, "train.py", ALL_RULES, parser)
    spliced = 0
    for edit in edits_for(text, 20):
        text = apply_edit(text, edit)
        assert lint_source(text, "train.py", ALL_RULES, parser) == lint_source(text, "train.py", ALL_RULES)
        spliced += parser.spliced
    assert spliced >= 15


def test_an_edit_that_breaks_the_syntax_is_reported_and_the_next_one_recovers():
    text = generate(300)
    parser = IncrementalParser()
    lint_source(text, "t.py", ALL_RULES, parser)
    broken = text.replace("def train_plain0(cfg, model, loader):", "def train_plain0(cfg, model, loader:", 1)
    diagnostics, _ = lint_source(broken, "t.py", ALL_RULES, parser)
    assert [d.code for d in diagnostics] == ["TL000"]
    assert lint_source(text, "t.py", ALL_RULES, parser) == lint_source(text, "t.py", ALL_RULES)
