"""torchlint.context.positions_of gives every node the range LibCST's own PositionProvider gives it."""

from pathlib import Path

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from libcst.metadata import MetadataWrapper, PositionProvider

from torchlint import context
from torchlint.context import positions_of

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted([*ROOT.glob("tests/corpus/**/*.py"), *ROOT.glob("fixtures/**/*.py"), *ROOT.glob("examples/**/*.py"),
                  *ROOT.glob("torchlint/**/*.py")])

TRICKY = {
    "crlf": "for x in data:\r\n    loss = f(x)\r\n    loss.backward()\r\n",
    "continuations": "total = (a +\n         b) \\\n    + c\nif x: y(); z()\n",
    "strings": 's = """one\ntwo"""\nt = f"{a!r:>{width}}"\nu = b"\\x00" b"more"\n',
    "decorators and tabs": "@decorate(\n    1)\nclass C:\n\tdef f(self):\n\t\treturn [i\n\t\t\tfor i in self]\n",
    "unicode": "größe = 'ß'  # 😀\nprint(größe)\n",
    "no final newline": "x = 1\nif x:\n    pass",
}


def provider_ranges(module: cst.Module) -> dict:
    return dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider))


def assert_same_ranges(module: cst.Module) -> None:
    expected = provider_ranges(module)
    got = positions_of(module)
    assert len(got._spans) == len(expected)
    differing = [(type(node).__name__, want, got[node]) for node, want in expected.items() if got[node] != want]
    assert differing == []


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: str(path.relative_to(ROOT)))
def test_ranges_match_libcst_on_the_repository(path):
    assert_same_ranges(cst.parse_module(path.read_bytes()))


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_ranges_match_libcst_on_tricky_layout(name):
    assert_same_ranges(cst.parse_module(TRICKY[name]))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar())
def test_ranges_match_libcst_on_generated_programs(source):
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        return
    assert_same_ranges(module)


def test_offset_moves_every_range_down():
    module = cst.parse_module("x = 1\ny = x\n")
    name = module.body[1].body[0].targets[0].target
    moved = positions_of(module, offset=10)[name]
    assert (moved.start.line, moved.start.column, moved.end.line, moved.end.column) == (12, 0, 12, 1)


def test_a_libcst_whose_code_generation_differs_gets_its_own_provider(monkeypatch):
    class Unfit:
        def __init__(self, **fields):
            raise TypeError("unexpected keyword argument")

    monkeypatch.setattr(context, "_PositionState", Unfit)
    module = cst.parse_module(TRICKY["continuations"])
    expected = provider_ranges(module)
    got = positions_of(module)
    assert all(got[node] == want for node, want in expected.items())
