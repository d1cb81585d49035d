"""Rule documentation: five fixed sections, `torchlint rule`, and `rules/*.md` kept in sync."""

from __future__ import annotations

import sys

import pytest

from conftest import REPO
from torchlint.docs import SYNTAX_ERROR_DOC, index_markdown, rule_markdown
from torchlint.engine import lint_source
from torchlint.rules import ALL_RULES

# Output, options and messages: the same with and without the speed-ups (test_speed_modes compares those).
TORCHLINT_MODES = ["pool+cache"]

SECTIONS = ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety")


@pytest.mark.parametrize("rule", ALL_RULES, ids=[rule.code for rule in ALL_RULES])
def test_rule_docstring_has_the_five_sections_in_order(rule):
    doc = sys.modules[rule.__module__].__doc__
    positions = [doc.find(section) for section in SECTIONS]
    assert -1 not in positions, rule.code
    assert positions == sorted(positions)


@pytest.mark.parametrize("rule", ALL_RULES, ids=[rule.code for rule in ALL_RULES])
def test_rules_folder_page_matches_the_docstring(rule):
    page = REPO / "rules" / f"{rule.code}.md"
    assert page.read_text(encoding="utf-8") == rule_markdown(rule), (
        f"{page} is stale: run `torchlint rule --all --output-dir rules`"
    )


def test_the_syntax_error_page_has_the_five_sections_and_its_examples_say_true():
    positions = [SYNTAX_ERROR_DOC.find(section) for section in SECTIONS]
    assert -1 not in positions and positions == sorted(positions)
    assert (REPO / "rules" / "TL000.md").read_text(encoding="utf-8") == SYNTAX_ERROR_DOC
    example, use_instead = [block.split("```", 1)[0] for block in SYNTAX_ERROR_DOC.split("```python\n")[1:]]
    assert [d.code for d in lint_source(example, "example.py", ALL_RULES)[0]] == ["TL000"]
    assert lint_source(use_instead, "use_instead.py", ALL_RULES)[0] == []


def test_rules_index_matches_the_registry():
    assert (REPO / "rules" / "README.md").read_text(encoding="utf-8") == index_markdown(ALL_RULES)


def test_rule_command_prints_the_documentation(torchlint):
    result = torchlint("rule", "TL003")
    assert result.returncode == 0
    assert result.stdout.startswith("# TL003 unscaled-accumulated-loss")
    assert "## Why is this bad?" in result.stdout and "Fix: safe fix" in result.stdout


def test_rule_command_documents_tl000_which_the_readme_lists(torchlint):
    assert "| [TL000](rules/TL000.md) | syntax-error |" in (REPO / "README.md").read_text(encoding="utf-8")
    for selector in ("TL000", "tl000", "syntax-error"):
        result = torchlint("rule", selector)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("# TL000 syntax-error\n") and "## Fix safety" in result.stdout
    assert torchlint("rule", "--all").stdout.startswith("# TL000 syntax-error\n")


def test_rule_command_accepts_a_name_and_all(torchlint):
    by_name = torchlint("rule", "missing-zero-grad")
    assert by_name.returncode == 0 and by_name.stdout.startswith("# TL002")
    everything = torchlint("rule", "--all")
    assert all(f"# {rule.code} " in everything.stdout for rule in ALL_RULES)


def test_rule_command_rejects_an_unknown_code(torchlint):
    result = torchlint("rule", "TL999")
    assert result.returncode == 2
    assert "unknown rule `TL999`" in result.stderr and "(known: TL000, TL001," in result.stderr


def test_output_dir_writes_pages(torchlint, tmp_path):
    result = torchlint("rule", "--all", "--output-dir", str(tmp_path / "pages"))
    assert result.returncode == 0
    assert sorted(p.name for p in (tmp_path / "pages").iterdir()) == sorted(
        [f"{rule.code}.md" for rule in ALL_RULES] + ["TL000.md", "README.md"]
    )
