"""Rule documentation: five fixed sections, `torchlint rule`, and `rules/*.md` kept in sync."""

from __future__ import annotations

import sys

import pytest

from conftest import REPO
from torchlint.docs import index_markdown, rule_markdown
from torchlint.rules import ALL_RULES

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


def test_rules_index_matches_the_registry():
    assert (REPO / "rules" / "README.md").read_text(encoding="utf-8") == index_markdown(ALL_RULES)


def test_rule_command_prints_the_documentation(torchlint):
    result = torchlint("rule", "TL003")
    assert result.returncode == 0
    assert result.stdout.startswith("# TL003 unscaled-accumulated-loss")
    assert "## Why is this bad?" in result.stdout and "Fix: safe fix" in result.stdout


def test_rule_command_accepts_a_name_and_all(torchlint):
    by_name = torchlint("rule", "missing-zero-grad")
    assert by_name.returncode == 0 and by_name.stdout.startswith("# TL002")
    everything = torchlint("rule", "--all")
    assert all(f"# {rule.code} " in everything.stdout for rule in ALL_RULES)


def test_rule_command_rejects_an_unknown_code(torchlint):
    result = torchlint("rule", "TL999")
    assert result.returncode == 2
    assert "unknown rule `TL999`" in result.stderr


def test_output_dir_writes_pages(torchlint, tmp_path):
    result = torchlint("rule", "--all", "--output-dir", str(tmp_path / "pages"))
    assert result.returncode == 0
    assert sorted(p.name for p in (tmp_path / "pages").iterdir()) == sorted(
        [f"{rule.code}.md" for rule in ALL_RULES] + ["README.md"]
    )
