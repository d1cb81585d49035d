"""torchlint's LibCST parse: the tree and the errors of `libcst.parse_module`, and checks still on afterwards."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from torchlint.parse import parse_module

REPO = Path(__file__).resolve().parent.parent
SOURCES = sorted((REPO / "examples").glob("*.py")) + sorted((REPO / "torchlint" / "training").glob("*.py"))


@pytest.mark.parametrize("path", SOURCES[:12], ids=lambda path: path.name)
def test_the_tree_is_libcsts_own(path):
    text = path.read_text(encoding="utf-8")
    module = parse_module(text)
    assert module.deep_equals(cst.parse_module(text))
    assert module.code == text


def test_a_syntax_error_is_libcsts_and_leaves_the_checks_on():
    with pytest.raises(cst.ParserSyntaxError):
        parse_module("def f(:\n    pass\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")  # an empty name: the node's own check still runs after a failed parse


def test_nodes_built_after_a_parse_are_checked():
    parse_module("x = (1 + 2)\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")
    with pytest.raises(cst.CSTValidationError):
        cst.BinaryOperation(cst.Name("a"), cst.Add(), cst.Name("b"), lpar=[cst.LeftParen()])  # unbalanced
