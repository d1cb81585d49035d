"""Every rule's embedded examples: valid code is quiet, invalid code is flagged where it says,
and the fix turns it into exactly the `fixed` text, idempotently."""

from __future__ import annotations

import libcst as cst
import pytest

from torchlint.engine import lint_source
from torchlint.fix import fix_source
from torchlint.rules import ALL_RULES

VALID = [(rule, index, code) for rule in ALL_RULES for index, code in enumerate(rule.valid)]
INVALID = [(rule, index, example) for rule in ALL_RULES for index, example in enumerate(rule.invalid)]


def _ids(cases):
    return [f"{rule.code}-{index}" for rule, index, _ in cases]


@pytest.mark.parametrize("rule, index, code", VALID, ids=_ids(VALID))
def test_valid_example_is_not_flagged(rule, index, code):
    diagnostics, problems = lint_source(code, "example.py", ALL_RULES)
    assert not problems
    assert [d for d in diagnostics if d.code == rule.code] == []


@pytest.mark.parametrize("rule, index, example", INVALID, ids=_ids(INVALID))
def test_invalid_example_is_flagged_at_its_line(rule, index, example):
    diagnostics, problems = lint_source(example.code, "example.py", [rule])
    assert not problems
    assert [d.line for d in diagnostics] == [example.line], [d.message for d in diagnostics]


@pytest.mark.parametrize("rule, index, example", INVALID, ids=_ids(INVALID))
def test_fix_produces_the_documented_code(rule, index, example):
    diagnostics, _ = lint_source(example.code, "example.py", [rule])
    if example.fixed is None:
        assert all(d.fix is None for d in diagnostics), "a fix is offered but the example documents none"
        return
    assert all(d.fix is not None and d.fix.is_safe != example.unsafe for d in diagnostics)
    outcome = fix_source(example.code, "example.py", [rule], unsafe=example.unsafe)
    assert outcome.source == example.fixed
    cst.parse_module(outcome.source)
    again = fix_source(outcome.source, "example.py", [rule], unsafe=example.unsafe)
    assert again.source == outcome.source and not again.fixed
    assert [d for d in again.remaining if d.code == rule.code] == []


@pytest.mark.parametrize("rule", ALL_RULES, ids=[rule.code for rule in ALL_RULES])
def test_safe_fix_is_not_applied_without_permission_when_unsafe(rule):
    for example in rule.invalid:
        if example.fixed is not None and example.unsafe:
            assert fix_source(example.code, "example.py", [rule], unsafe=False).source == example.code


def test_every_rule_has_valid_and_invalid_examples():
    for rule in ALL_RULES:
        assert len(rule.valid) >= 3, rule.code
        assert len(rule.invalid) >= 2, rule.code


def test_codes_and_names_are_unique_and_well_formed():
    codes = [rule.code for rule in ALL_RULES]
    names = [rule.name for rule in ALL_RULES]
    assert len(set(codes)) == len(codes) and len(set(names)) == len(names)
    assert all(code.startswith("TL") and len(code) == 5 for code in codes)
    assert all(name == name.lower() and " " not in name for name in names)
