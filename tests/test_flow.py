"""The flow layer's own facts: reaching definitions, "assigned on every path", "carried into the next
iteration", dominance and paths, on small functions whose answers can be read off by hand.

Each case is a loop body and a question about one statement in it, marked `# <-`: the statement
whose start the question is asked at.
"""

from __future__ import annotations

import textwrap
from typing import List, Tuple

import libcst as cst
import pytest

from torchlint.flow import ControlFlowGraph, FunctionFlow, Iteration
from torchlint.training.graph import inplace_effects


def _analyse(body: str, effects=None) -> Tuple[ControlFlowGraph, FunctionFlow, Iteration, List[int]]:
    """A function holding `body` (whose first statement is the loop); the loop's iteration, and the
    nodes of the lines marked `# <-`, in order."""
    source = "def f(loader, model, opt, n):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    module = cst.parse_module(source)
    function = module.body[0]
    graph = ControlFlowGraph(function, effects)
    flow = FunctionFlow(graph)
    loop = next(statement for statement in function.body.body if isinstance(statement, (cst.For, cst.While)))
    iteration = flow.iteration(graph.region(loop))
    marked = [number for number, line in enumerate(source.splitlines(), start=1) if line.rstrip().endswith("# <-")]
    nodes = []
    for line in marked:
        text = source.splitlines()[line - 1].split("#")[0].strip()
        node = next(n for n in graph.nodes if n.syntax is not None and n.line is not None
                    and module.code_for_node(n.syntax).strip() == text)
        nodes.append(node.index)
    return graph, flow, iteration, nodes


# (loop, name asked about at the marked statement, is the value from before the iteration possible?)
FRESH = [
    ("the loop's own target", """
        for batch in loader:
            use(batch)  # <-
     """, "batch", False),
    ("the target rebound from itself", """
        for batch in loader:
            batch = to_device(batch)  # <-
     """, "batch", False),
    ("tuple unpacking of targets", """
        for x, y in loader:
            x, y = mixup(x, y)  # <-
     """, "y", False),
    ("if and else both assign", """
        for x in loader:
            if aux:
                loss = a(x) + b(x)
            else:
                loss = a(x)
            loss += reg  # <-
     """, "loss", False),
    ("if without else", """
        for x in loader:
            if aux:
                loss = a(x)
            loss += reg  # <-
     """, "loss", True),
    ("if, elif and else all assign", """
        for x in loader:
            if k == 0:
                loss = a(x)
            elif k == 1:
                loss = b(x)
            else:
                loss = c(x)
            use(loss)  # <-
     """, "loss", False),
    ("an elif without else", """
        for x in loader:
            if k == 0:
                loss = a(x)
            elif k == 1:
                loss = b(x)
            use(loss)  # <-
     """, "loss", True),
    ("try and every handler assign", """
        for x in loader:
            try:
                loss = a(x)
            except ValueError:
                loss = b(x)
            use(loss)  # <-
     """, "loss", False),
    ("a handler that does not assign", """
        for x in loader:
            try:
                loss = a(x)
            except ValueError:
                pass
            use(loss)  # <-
     """, "loss", True),
    ("assigned in finally", """
        for x in loader:
            try:
                work(x)
            finally:
                loss = a(x)
            use(loss)  # <-
     """, "loss", False),
    ("match with a wildcard case", """
        for x in loader:
            match mode:
                case "l1":
                    loss = l1(x)
                case _:
                    loss = l2(x)
            use(loss)  # <-
     """, "loss", False),
    ("match without a wildcard", """
        for x in loader:
            match mode:
                case "l1":
                    loss = l1(x)
                case "l2":
                    loss = l2(x)
            use(loss)  # <-
     """, "loss", True),
    ("assigned inside with", """
        for x in loader:
            with autocast():
                loss = a(x)
            use(loss)  # <-
     """, "loss", False),
    ("assigned in a nested loop that may not run", """
        for x in loader:
            for chunk in split(x):
                loss = a(chunk)
            use(loss)  # <-
     """, "loss", True),
    ("a walrus in a condition", """
        for x in loader:
            if (loss := a(x)) is not None:
                pass
            use(loss)  # <-
     """, "loss", False),
    ("an augmented assignment reads the old value", """
        for x in loader:
            total += a(x)  # <-
     """, "total", True),
    ("assigned before `continue` on the other branch", """
        for x in loader:
            if skip(x):
                continue
            else:
                h = init(x)
            use(h)  # <-
     """, "h", False),
    ("a while loop", """
        while step < n:
            loss = a(step)
            use(loss)  # <-
     """, "loss", False),
]


@pytest.mark.parametrize("body, name, from_start", [case[1:] for case in FRESH], ids=[case[0] for case in FRESH])
def test_assigned_on_every_path(body, name, from_start):
    _, _, iteration, (node,) = _analyse(body)
    assert iteration.fresh_at(node, name) is not from_start


CARRIED = [
    ("the loop's target is never carried", """
        for batch in loader:
            batch = to_device(batch)  # <-
     """, "batch", False),
    ("a running sum", """
        for x in loader:
            total += a(x)  # <-
     """, "total", True),
    ("state fed back into the model", """
        for x in loader:
            out, h = rnn(x, h)  # <-
     """, "h", True),
    ("reset at the top of every iteration", """
        for x in loader:
            total = 0
            total += a(x)  # <-
     """, "total", False),
    ("reset under a narrower if: carried between resets", """
        for i, x in enumerate(loader):
            if i % 4 == 0:
                total = 0
            total += a(x)  # <-
     """, "total", True),
    ("a name never assigned in the loop", """
        for x in loader:
            use(model)  # <-
     """, "model", False),
]


@pytest.mark.parametrize("body, name, carried", [case[1:] for case in CARRIED], ids=[case[0] for case in CARRIED])
def test_carried_into_the_next_iteration(body, name, carried):
    _, _, iteration, (node,) = _analyse(body)
    assert iteration.carried(node, name) is carried


def test_carried_out_holds_what_reaches_the_back_edge():
    _, _, iteration, _ = _analyse("""
        for i, x in enumerate(loader):
            total += a(x)
            if (i + 1) % 4 == 0:
                total = 0
            if skip(x):
                continue
            other = 1
    """)
    values = sorted(cst.Module([]).code_for_node(d.syntax) for d in iteration.carried_out("total"))
    assert values == ["total += a(x)", "total = 0"]


def test_function_level_definitions_entering_a_loop():
    graph, flow, _, _ = _analyse("""
        for epoch in range(3):
            h = init()
            for x in loader:
                out, h = rnn(x, h)
    """)
    inner = graph.owner.body.body[0].body.body[1]
    entering = flow.entering(graph.region(inner), "h")
    assert [cst.Module([]).code_for_node(d.value) for d in entering] == ["init()"]


@pytest.mark.parametrize("reset_inside, returning", [(False, ["tokens += n", "tokens = 0"]), (True, [])])
def test_body_definitions_returning_to_the_loop_through_an_outer_loop(reset_inside, returning):
    """A count set before the epochs runs on into the inner loop's next run; one set in each epoch does not."""
    graph, flow, _, _ = _analyse(f"""
        tokens = 0
        for epoch in range(3):
            {"tokens = 0" if reset_inside else "pass"}
            for x in loader:
                tokens += n
                if done(x):
                    tokens = 0
    """)
    inner = graph.owner.body.body[1].body.body[1]
    found = sorted(cst.Module([]).code_for_node(d.syntax) for d in flow.returning(graph.region(inner), "tokens"))
    assert found == returning
    entering = [cst.Module([]).code_for_node(d.value) for d in flow.entering(graph.region(inner), "tokens")]
    assert entering == ["0"]


def test_branches_dominate_what_they_guard():
    _, _, iteration, (step, reset, log) = _analyse("""
        for i, x in enumerate(loader):
            loss = a(x)
            if skip(x):
                continue
            if (i + 1) % n == 0:
                opt.step()  # <-
                opt.zero_grad()  # <-
            log(loss)  # <-
    """)
    assert iteration.runs_whenever((reset, 0), (step, 0)) and iteration.runs_whenever((step, 0), (reset, 0))
    assert iteration.runs_whenever((log, 0), (step, 0)) and not iteration.runs_whenever((step, 0), (log, 0))
    assert iteration.dominates((step, 0), (reset, 0)) and not iteration.dominates((reset, 0), (step, 0))
    tests = [(cst.Module([]).code_for_node(n.assume.test), n.assume.holds) for n in iteration.assumptions(reset)]
    assert tests == [("skip(x)", False), ("(i + 1) % n == 0", True)]
    assert [n.assume.holds for n in iteration.assumptions(log)] == [False]


def test_paths_around_the_back_edge_avoiding_a_cut():
    _, _, iteration, (update, backward, detach) = _analyse("""
        for t, x in enumerate(loader):
            out, h = cell(x, h)  # <-
            if (t + 1) % k == 0:
                loss.backward()  # <-
                h = h.detach()  # <-
    """)
    assert iteration.reaches((update, 0), (backward, 0))
    assert not iteration.reaches((backward, 0), (update, 0), frozenset({detach}))
    assert iteration.reaches((update, 0), (update, 0))  # around the back edge, without the backward
    assert not iteration.precedes((backward, 0), (update, 0))


@pytest.mark.parametrize("detach", ["h.detach_()", "h[0].detach_()", "for s in h:\n    s.detach_()",
                                    "[s.detach_() for s in h]"])
def test_in_place_detach_is_a_definition_of_the_name(detach):
    body = "for x in loader:\n" + textwrap.indent(detach, "    ") + "\n    out, h = rnn(x, h)  # <-\n"
    _, _, iteration, (node,) = _analyse(body, inplace_effects)
    kinds = [(d.kind, d.effect) for d in iteration.reaching(node, "h")]
    assert kinds == [("effect", "detach")]


def test_tuple_of_the_state_is_not_a_detach():
    _, _, iteration, (node,) = _analyse("""
        for x in loader:
            h = tuple(h)
            out, h = rnn(x, h)  # <-
    """, inplace_effects)
    (definition,) = iteration.reaching(node, "h")
    assert definition.kind == "assign" and definition.reads_itself
