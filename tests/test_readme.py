"""The README says what torchlint does: its sample output, its install commands, its editor snippets."""

from __future__ import annotations

import re

from conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def fenced(language: str) -> list:
    """The README's fenced code blocks in `language`, each with the paragraph line just before it."""
    return [(match.group(1), match.group(2))
            for match in re.finditer(r"([^\n]*)\n+```" + language + r"\n(.*?)```", README, re.DOTALL)]


def test_the_sample_output_is_what_torchlint_prints(torchlint):
    sample = fenced("text")[0][1]
    result = torchlint("examples/finetune_accumulation.py")
    assert result.stdout.startswith(sample), result.stdout
