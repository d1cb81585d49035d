"""The realistic corpus: every finding where a `# expect: TL00N` comment says, and nowhere else.

Each file in `tests/corpus/` is a small training script written the way real
projects write them. `tlNNN_bug_*.py` hides rule TLNNN's bug behind some
disguise (a trainer class, AMP, Accelerate, a manual counter...);
`tlNNN_trap_*.py` is correct code that looks like the bug and must stay
quiet. A line a rule must report carries `# expect: TL00N` (several codes
separated by commas); a file without such a comment must produce no finding
from any rule: a false positive is as much a bug as a miss.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Set, Tuple

import pytest

from torchlint.engine import lint_source
from torchlint.rules import ALL_RULES

CORPUS = Path(__file__).resolve().parent / "corpus"
FILES = sorted(CORPUS.glob("*.py"))
_EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>TL\d{3}(?:\s*,\s*TL\d{3})*)")
_NAME = re.compile(r"^(?P<code>tl\d{3})_(?P<kind>bug|trap)_\w+\.py$")

# The corpus may grow, never silently shrink below this per rule.
MIN_BUG_FILES = 4
MIN_TRAP_FILES = 3
CORPUS_RULES = ("TL001", "TL002", "TL003", "TL004", "TL005", "TL006", "TL007", "TL008", "TL009", "TL010", "TL011",
                "TL012", "TL013", "TL014", "TL015", "TL016", "TL017", "TL018")


def expected_findings(text: str) -> Set[Tuple[int, str]]:
    """(line, code) pairs named by `# expect:` comments."""
    expected = set()
    for number, line in enumerate(text.splitlines(), start=1):
        match = _EXPECT.search(line)
        if match:
            expected.update((number, code.strip()) for code in match.group("codes").split(","))
    return expected


@pytest.mark.parametrize("path", FILES, ids=[path.name for path in FILES])
def test_corpus_file_gets_exactly_the_expected_findings(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    diagnostics, problems = lint_source(text, str(path), ALL_RULES)
    assert not problems, [problem.message for problem in problems]
    found = {(d.line, d.code): d.message for d in diagnostics}
    expected = expected_findings(text)
    misses = sorted(expected - set(found))
    false_positives = sorted(set(found) - expected)
    report = [f"missed {code} at line {line}: {text.splitlines()[line - 1].strip()}" for line, code in misses]
    report += [f"false positive {code} at line {line}: {found[(line, code)]}" for line, code in false_positives]
    assert not report, f"{path.name}:\n  " + "\n  ".join(report)
    assert len(diagnostics) == len(found), "a line got the same finding twice"


def test_corpus_file_names_agree_with_their_expectations() -> None:
    """A bug file expects its own rule; a trap file expects nothing at all."""
    for path in FILES:
        match = _NAME.match(path.name)
        assert match, f"{path.name}: name it tlNNN_bug_<what>.py or tlNNN_trap_<what>.py"
        codes = {code for _, code in expected_findings(path.read_text(encoding="utf-8"))}
        if match.group("kind") == "bug":
            assert match.group("code").upper() in codes, f"{path.name} expects no {match.group('code').upper()}"
        else:
            assert not codes, f"{path.name} is a trap but expects {sorted(codes)}"


def test_corpus_covers_every_rule_with_bugs_and_traps() -> None:
    kinds = Counter()
    for path in FILES:
        match = _NAME.match(path.name)
        if match:
            kinds[(match.group("code").upper(), match.group("kind"))] += 1
    for code in CORPUS_RULES:
        assert kinds[(code, "bug")] >= MIN_BUG_FILES, f"{code}: only {kinds[(code, 'bug')]} bug files"
        assert kinds[(code, "trap")] >= MIN_TRAP_FILES, f"{code}: only {kinds[(code, 'trap')]} trap files"
