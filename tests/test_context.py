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


# A loop's function whose statements repeat (`optimizer.step()` twice, at different depths and at the same one), in
# blocks indented by two spaces and by four, with comments and blank lines before statements, a statement continued
# over lines, and a function the sparse program leaves out that spells the loop's lines again.
SCOPED = (
    "import torch\n"
    "\n"
    "\n"
    "def plot(history):\n"
    "    for step in range(3):\n"
    "        print(step)\n"
    "        optimizer.step()\n"
    "\n"
    "\n"
    "def train(model, optimizer, loader, accum):\n"
    "    for step, (x, y) in enumerate(loader):\n"
    "        # the loss of one micro-batch\n"
    "\n"
    "        loss = torch.nn.functional.mse_loss(model(x),\n"
    "                                            y)\n"
    "        loss.backward()\n"
    "        print(step)\n"
    "        if (step + 1) % accum == 0:\n"
    "          optimizer.step()\n"
    "          optimizer.zero_grad()\n"
    "        else:\n"
    "            optimizer.step()\n"
    "        optimizer.step()\n"
    "    return model\n"
)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_node_in_a_long_statement_gets_the_range_of_a_whole_parse_from_the_statement_around_it(newline):
    from torchlint.context import FileContext
    from torchlint.engine import Screened, screen
    from torchlint.parse import parse_module
    from torchlint.walk import preorder

    text = SCOPED.replace("\n", newline)
    screened = screen(text, "train.py")
    assert isinstance(screened, Screened) and screened.program != text  # `plot` is left out
    module = parse_module(screened.program)
    expected = provider_ranges(module)
    found = FileContext("train.py", text, module, screened.statement_lines, screened.program)
    (top,) = found._loop_statements()
    loop = top.body.body[0]
    differing = [(type(node).__name__, expected[node], found._position(node))
                 for node in reversed(list(preorder(loop))) if found._position(node) != expected[node]]
    assert differing == []
    # placed by the statements around them, innermost first (a statement line, the `if`...), not by code generation
    # of the function
    assert id(top) not in found._scoped and len(found._scoped) > 1
    assert all(found._position(node) == expected[node] for node in preorder(top))  # its header too


def test_a_statement_whose_code_occurs_twice_is_placed_by_a_statement_around_it():
    from torchlint.context import FileContext
    from torchlint.parse import parse_module

    text = SCOPED
    module = parse_module(text)
    found = FileContext("train.py", text, module)
    train = module.body[-1]
    loop = train.body.body[0]
    steps = [statement for statement in loop.body.body if "optimizer.step()" == found.code(statement).strip()]
    assert len(steps) == 1  # the last one, at the depth of the one in `plot`
    step = steps[0].body[0]
    assert found._position(step) == provider_ranges(module)[step]
    assert id(steps[0]) not in found._scoped  # its own code occurs twice in the file: the loop is generated
