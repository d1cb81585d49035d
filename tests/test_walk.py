"""The fast read-only walks visit what LibCST's own visitor visits, in the same order."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import List

import libcst as cst
import pytest

from torchlint.names import iter_names
from torchlint.walk import calls_in, children, preorder, remembering

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "tests" / "corpus").glob("*.py"))[::4] + sorted((ROOT / "examples").glob("*.py")) + [
    ROOT / "torchlint" / "training" / "loop.py", ROOT / "torchlint" / "flow" / "cfg.py", ROOT / "bench" / "bench.py",
]
# Nodes that carry meaning; layout (whitespace, commas, parentheses) is not walked.
MEANINGFUL = (cst.BaseExpression, cst.BaseStatement, cst.BaseSmallStatement, cst.Arg, cst.Param, cst.Decorator,
              cst.CompFor, cst.CompIf, cst.ExceptHandler, cst.WithItem, cst.ImportAlias, cst.AsName,
              cst.Else, cst.Finally, cst.MatchCase, cst.AssignTarget, cst.Annotation, cst.DictElement,
              cst.Element, cst.SubscriptElement, cst.FormattedStringExpression, cst.ComparisonTarget)


# Every construct whose fields are not in source order, to pin the walk's overrides.
CONSTRUCTS = """\
@decorate(x)
@other
def f(a, /, b: int = g(1), *args, c=h(), **kw) -> ret(t):
    y = p(1) if q(2) else r(3)
    call(k=v(1), *s(2), **t(3))
    s = f"{value(1):>{width(2)}}" f"{z!r}"
    try:
        pass
    except (E(1), F) as error:
        raise G(error) from H()
    try:
        pass
    except* group(1) as eg:
        handle(eg)
    match subject(1):
        case [first, *rest] if guard(first):
            pass
        case {"k": v2, **others}:
            pass
        case Point(x=0, y=yy) as pt:
            pass
    lam = lambda u=d(1): inner(u)
    return {k(1): v(2) for k in ks(3) if keep(4)}


@decorate
class C(Base(1), metaclass=Meta(2)):
    attr: ann(1) = val(2)


type Alias[T: bound(1)] = value(2)
"""


class _Recorder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.order: List[cst.CSTNode] = []
        self.calls: List[cst.Call] = []
        self.names: List[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, MEANINGFUL):
            self.order.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if isinstance(original_node, cst.Call):
            self.calls.append(original_node)


class _CallsOutsideLambdas(cst.CSTVisitor):
    def __init__(self) -> None:
        self.calls: List[cst.Call] = []

    def leave_Call(self, node: cst.Call) -> None:
        self.calls.append(node)

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


class _Names(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: List[str] = []

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        parts = []
        current: cst.BaseExpression = node
        while isinstance(current, cst.Attribute):
            parts.append(current.attr.value)
            current = current.value
        if isinstance(current, cst.Name):
            dotted = ".".join([current.value] + parts[::-1])
            self.found += [dotted, current.value]
            return False
        return True

    def visit_Name(self, node: cst.Name) -> None:
        self.found.append(node.value)

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


@pytest.mark.parametrize("remembered", [False, True], ids=["fresh", "remembered"])
@pytest.mark.parametrize("source", SOURCES + [CONSTRUCTS], ids=lambda s: s.name if isinstance(s, Path) else "constructs")
def test_walks_agree_with_libcst_visitors(source, remembered):
    """As they walk a file for the first time, and again and again while a file is analysed (`remembering`),
    when `children` hands out the lists it gave before."""
    module = cst.parse_module(source.read_text(encoding="utf-8") if isinstance(source, Path) else source)
    recorder = _Recorder()
    module.visit(recorder)
    with remembering() if remembered else contextlib.nullcontext():
        for _ in range(3 if remembered else 1):
            assert [node for node in preorder(module) if isinstance(node, MEANINGFUL)] == recorder.order
            for statement in module.body:
                expected = _CallsOutsideLambdas()
                statement.visit(expected)
                assert calls_in(statement) == expected.calls
                names = _Names()
                statement.visit(names)
                assert list(iter_names(statement)) == names.found


def test_children_are_remembered_only_inside_the_block_and_per_node():
    module = cst.parse_module("loss = model(x)\nloss.backward()\n")
    first, second = module.body
    outside = children(first)
    assert children(first) is not outside  # no memory outside the block: a fresh list each time
    with remembering():
        inside = children(first)
        assert children(first) is inside
        with remembering():  # a nested block shares the outer one's memory
            assert children(first) is inside
        assert children(second) == [second.body[0]] and children(second) is not inside
        # another node equal in code is another node
        again = cst.parse_module("loss = model(x)\n").body[0]
        assert children(again) is not inside and children(again)[0] is again.body[0]
    assert children(first) is not inside  # forgotten after it


def test_node_classes_tested_by_their_type_have_no_subclasses():
    # The hot walks test `type(node) is cst.Call` where `isinstance` would go through the ABC's slow check:
    # the same answer only while LibCST's node classes stay final.
    for kind in (cst.Call, cst.Lambda, cst.Name, cst.Attribute, cst.FunctionDef, cst.ClassDef, cst.Yield, cst.Await,
                 cst.Return, cst.For, cst.While, cst.If, cst.With, cst.Try, cst.TryStar, cst.SimpleStatementLine,
                 cst.SimpleStatementSuite):
        assert not kind.__subclasses__(), kind


# --- the screen's walks over CPython's trees (torchlint.pywalk) -------------------------------------------------

PYTHON_CONSTRUCTS = """\
async def f(a, /, b=g(1), *args, c=h(), **kw):
    async with lock() as (x, y):
        async for item in stream(z):
            match item:
                case {"k": [first, *rest]} if guard(first):
                    total += first
                case Point(x=0) | None:
                    pass
    global counter
    lam = lambda q=d(): [e(i) for i in range(3) if keep(i)]
    return f"{fmt(a)!r:>{width()}}", (yield await go()), {k(v): w for v in s}, x if t() else y
"""


def _python_sources() -> List[str]:
    return [PYTHON_CONSTRUCTS] + [path.read_text(encoding="utf-8") for path in SOURCES]


def test_the_screens_walk_meets_every_node_ast_walk_does_but_operators_and_contexts():
    import ast

    from torchlint.pywalk import calls, nodes

    leaves = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)
    for text in _python_sources():
        tree = ast.parse(text)
        for top in [tree, *tree.body]:
            expected = [node for node in ast.walk(top) if not isinstance(node, leaves)]
            got = nodes(top)
            assert len(got) == len(expected) and {id(node) for node in got} == {id(node) for node in expected}
            assert sorted(map(id, calls(top))) == sorted(id(node) for node in expected if isinstance(node, ast.Call))
