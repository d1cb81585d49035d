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


@pytest.mark.parametrize("after, read", [
    ("total.backward()", True),          # the value the body leaves is read after the loop
    ("total = 0\nprint(total)", False),  # set afresh first: the body's value is not what is read
    ("print(other)", False),
])
def test_a_value_the_body_leaves_read_after_the_loop(after, read):
    graph, flow, _, _ = _analyse("total = 0\nfor x in loader:\n    total = total + model(x)\n" + after + "\n")
    loop = graph.owner.body.body[1]
    assert flow.read_after(graph.region(loop), "total") is read


@pytest.mark.parametrize("before, first, unassigned", [
    # set before the epochs and advanced at each epoch's end: the first start sees only the `= 0`
    ("step = 0", ["0"], False),
    # set nowhere before: the value it had when the function was called (an attribute's, from its class)
    ("pass", [], True),
    # set on one path only: both
    ("if resume:\n    step = ckpt['step']", ["ckpt['step']"], True),
])
def test_definitions_holding_when_a_loop_first_starts(before, first, unassigned):
    """The loop's first start is reached without going round a loop: `step += 1` at the end of the epoch loop
    reaches the inner loop's later starts (`entering` sees it), not its first."""
    indented = textwrap.indent(before, "        ")
    graph, flow, _, _ = _analyse(f"""
{indented}
        for epoch in range(3):
            for x in loader:
                step += 1
            step += 1
    """)
    inner = next(s for s in graph.owner.body.body if isinstance(s, cst.For)).body.body[0]
    definitions, reached_unset = flow.first_entering(graph.region(inner), "step")
    assert [cst.Module([]).code_for_node(d.value) for d in definitions] == first
    assert reached_unset is unassigned
    assert any(d.kind == "augmented" for d in flow.entering(graph.region(inner), "step"))


def test_attribute_counter_first_start_is_unset_until_an_owner_is_rebound():
    """`self = other` rebinds what `self.step` names: no longer the value it had on entry."""
    graph, flow, _, _ = _analyse("""
        if swap:
            opt = other
        for x in loader:
            opt.n += 1
    """)
    loop = next(s for s in graph.owner.body.body if isinstance(s, cst.For))
    definitions, reached_unset = flow.first_entering(graph.region(loop), "opt.n")
    assert definitions == [] and reached_unset is True
    graph, flow, _, _ = _analyse("""
        opt = other
        for x in loader:
            opt.n += 1
    """)
    loop = next(s for s in graph.owner.body.body if isinstance(s, cst.For))
    assert flow.first_entering(graph.region(loop), "opt.n") == ([], False)


@pytest.mark.parametrize("before, reached", [
    ("if resume:\n    self.load(path)", True),  # a fresh run goes round it
    ("self.load(path)", False),  # every run passes it
    ("for p in paths:\n    self.load(p)", True),  # a loop that may not run at all
])
def test_a_loop_first_reached_avoiding_a_call(before, reached):
    indented = textwrap.indent(before, "        ")
    graph, flow, _, _ = _analyse(f"""
{indented}
        for x in loader:
            step += 1
    """)
    loads = frozenset(node.index for node in graph.nodes if node.kind == "statement"
                      and "load" in cst.Module([]).code_for_node(node.syntax))
    loop = [s for s in graph.owner.body.body if isinstance(s, cst.For)][-1]
    assert loads and flow.first_reached_avoiding(graph.region(loop), loads) is reached


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


@pytest.mark.parametrize("leave", ["raise RuntimeError('non-finite loss')", "sys.exit(1)", "exit()", "quit()",
                                   "os._exit(1)"])
def test_an_exceptional_exit_is_not_a_way_through_the_iteration(leave):
    graph, _, iteration, (leaving, backward, reset) = _analyse(f"""
        for i, x in enumerate(loader):
            loss = a(x)
            if not math.isfinite(loss):
                {leave}  # <-
            loss.backward()  # <-
            if (i + 1) % n == 0:
                opt.step()
            opt.zero_grad()  # <-
    """)
    assert leaving in graph.raising and graph.nodes[leaving].succ == [graph.exit]
    assert not iteration.completes(leaving)
    assert iteration.postdominates((reset, 0), (backward, 0))
    # The branch that does not raise is no condition on a completed iteration.
    assert iteration.assumptions(reset) == [] and iteration.assumptions(backward) == []


def test_a_raise_inside_try_goes_to_the_handler_a_branch_of_its_own():
    graph, _, iteration, (raising, reset, step) = _analyse("""
        for i, x in enumerate(loader):
            try:
                loss = a(x)
                if bad(loss):
                    raise ValueError(loss)  # <-
                loss.backward()
            except ValueError:
                opt.zero_grad()  # <-
                continue
            opt.step()  # <-
    """)
    handler = next(n for n in graph.nodes if n.kind == "handler")
    assert raising not in graph.raising and handler.index in graph.nodes[raising].succ
    assert iteration.completes(raising)
    assert [n.index for n in iteration.assumptions(reset)] == [handler.index]
    # A raise the loop handles is a way through the iteration: the step runs only when it did not happen.
    assert [n.assume.holds for n in iteration.assumptions(step)] == [False]
    assert not iteration.runs_whenever((reset, 0), (step, 0))


@pytest.mark.parametrize("test, holds, known", [
    ("h is None", True, {"h"}),
    ("h is None", False, set()),
    ("h is not None", False, {"h"}),
    ("h is not None", True, set()),
    ("None is h", True, {"h"}),
    ("not (h is not None)", True, {"h"}),
    ("self.h is not None", False, {"self.h"}),
    ("h is None and c is None", True, {"h", "c"}),
    ("h is not None or c is not None", False, {"h", "c"}),
    ("h is not None and ready", False, set()),  # `ready` may be what failed
    ("h is None or fresh", True, set()),
    ("h == None", True, set()),  # `==` may be overloaded (an array compares element-wise)
    ("not h", True, set()),  # falsy is not None
])
def test_a_branch_knows_which_values_are_none(test, holds, known):
    graph, _, _, _ = _analyse(f"""
        for x in loader:
            if {test}:
                h = h.detach()
            out, h = rnn(x, h)
    """)
    (assume,) = [n for n in graph.nodes if n.assume is not None and n.assume.holds == holds]
    assert set(assume.assume.known_none) == known
    assert all((assume.index in graph.known_none(name)) for name in known)


@pytest.mark.parametrize("test, holds, one_of", [
    ("h is not None and c is not None", False, {"h", "c"}),  # the `else`: one of them at least is `None`
    ("h is None or c is None", True, {"h", "c"}),
    ("not (h is not None and c is not None)", True, {"h", "c"}),
    ("h is not None and c is not None", True, set()),  # the body: neither is
    ("h is not None and ready", False, set()),  # `ready` may be what failed
    ("h is None or fresh", True, set()),
])
def test_a_branch_knows_one_of_several_values_is_none(test, holds, one_of):
    graph, _, _, _ = _analyse(f"""
        for x in loader:
            if {test}:
                h = h.detach()
            out, h = rnn(x, h)
    """)
    (assume,) = [n for n in graph.nodes if n.assume is not None and n.assume.holds == holds]
    assert set(assume.assume.one_of_none) == one_of
    assert (assume.index in graph.one_of_none(frozenset({"h", "c"}))) is bool(one_of)
    assert assume.index not in graph.one_of_none(frozenset({"h"}))  # `c` may be the `None` one


@pytest.mark.parametrize("statement, reads", [
    ("loss = sum(loss for loss in losses)", False),  # the generator's own `loss`
    ("loss = [loss * w for w, loss in zip(ws, parts)]", False),
    ("loss = {k: loss for k, loss in parts.items()}", False),
    ("loss = sum(l for group in groups for l in group if loss)", True),  # the condition reads the function's
    ("loss = [x for x in loss]", True),  # the first iterable is evaluated outside the comprehension
    ("loss = [l for group in loss for l in group]", True),
    ("loss = [l for group in groups for l in loss]", True),  # a later iterable, inside: still not bound
    ("loss = max(parts, key=lambda loss: loss.item())", False),
    ("loss = loss + sum(w * l for w, l in zip(ws, parts))", True),
])
def test_a_comprehension_binds_its_own_names(statement, reads):
    graph, _, _, (node,) = _analyse(f"""
        for x in loader:
            {statement}  # <-
    """)
    (definition,) = [d for d in graph.nodes[node].definitions if d.name == "loss"]
    assert definition.reads_itself is reads


def test_names_bound_around_a_call_inside_a_comprehension():
    from torchlint.flow import scopes

    expression = cst.parse_expression("[l.backward() for group in groups for l in group if l.requires_grad]")
    call = expression.elt
    assert scopes.bound_around(expression, call) == {"l", "group"}
    assert scopes.bound_around(expression, expression) == frozenset()
    assert scopes.free_names(expression) == ["groups"]
    lam = cst.parse_expression("lambda l, scale=s: l.backward() * scale")
    assert scopes.bound_around(lam, lam.body.left) == {"l", "scale"}
    assert scopes.free_names(lam) == ["s"]
    assert scopes.free_names(cst.parse_expression("lambda: loss.backward()")) == []
    assert scopes.free_names(cst.parse_expression("lambda: loss.backward()"), lambdas=True) == [
        "loss.backward", "loss"]


def test_enclosing_loops_are_the_loops_whose_body_holds_a_loop():
    source = textwrap.dedent("""
        def f(loader, epochs):
            for epoch in range(epochs):
                while True:
                    for batch in loader:
                        pass
            for batch in loader:
                pass
    """)
    function = cst.parse_module(source).body[0]
    graph = ControlFlowGraph(function)
    outer = function.body.body[0]
    middle = outer.body.body[0]
    inner = middle.body.body[0]
    alone = function.body.body[1]
    assert graph.enclosing_loops(graph.region(outer)) == []
    assert {id(r.statement) for r in graph.enclosing_loops(graph.region(inner))} == {id(outer), id(middle)}
    assert graph.enclosing_loops(graph.region(alone)) == []


_OLD_STYLE = "from torch.autograd import Variable\nimport torch\n"


@pytest.mark.parametrize("value, cut", [
    ("h.data", True),
    ("h.data.clone()", True),
    ("Variable(h.data)", True),
    ("torch.autograd.Variable(h.data, requires_grad=False)", True),
    ("tuple(s.data for s in h)", True),
    ("[s.data for s in h]", True),
    ("(h[0].data, h[1].data)", True),
    ("h.detach()[0]", True),
    ("tuple(h)", False),
    ("tuple(s.contiguous() for s in h)", False),
    ("h.clone()", False),
    ("h[0]", False),
])
def test_graph_effects_table_cuts(value, cut):
    from torchlint.names import ModuleNames
    from torchlint.training.graph import detaches

    module = cst.parse_module(_OLD_STYLE + f"h = {value}\n")
    names = ModuleNames(module)
    assert detaches(module.body[-1].body[0].value, names) is cut


@pytest.mark.parametrize("value, state", [
    ("3", "no"), ("x", "no"), ("f", "yes"), ("p", "unknown"),
    ("torch.zeros(3, device=p)", "no"), ("torch.cat([x, f])", "yes"), ("torch.cat([x, p])", "unknown"),
    ("p.detach()", "no"), ("p.data", "no"), ("p.item()", "no"), ("Net(p)", "no"), ("len(p)", "no"),
    ("x.to(p)", "no"), ("x.view(p, -1)", "no"), ("x.mul(p)", "unknown"), ("x * 2 + f", "yes"),
    ("backbone(x)", "yes"), ("get_target()", "unknown"), ("[g(s) for s in x]", "yes"),
])
def test_graph_state_of_a_value(value, state):
    """Three answers: `f` has a graph, `x` has none, `p` (a parameter) is not shown."""
    from torchlint.names import ModuleNames
    from torchlint.training.graph import graph_state

    module = cst.parse_module(f"import torch\nv = {value}\n")
    known = {"x": "no", "f": "yes"}
    assert graph_state(module.body[-1].body[0].value, ModuleNames(module), lambda n: known.get(n, "unknown")) == state


@pytest.mark.parametrize("value, state", [
    ("model(x)", "no"), ("criterion(model(x), y)", "no"), ("model(x) + p", "unknown"), ("head(f)", "yes"),
])
def test_graph_a_value_brings_in(value, state):
    """`inherited`: a forward pass made here brings in only what its inputs carry."""
    from torchlint.names import ModuleNames
    from torchlint.training.graph import graph_state

    module = cst.parse_module(f"v = {value}\n")
    known = {"x": "no", "y": "no", "f": "yes"}
    assert graph_state(module.body[-1].body[0].value, ModuleNames(module), lambda n: known.get(n, "unknown"),
                       inherited=True) == state


_BEFORE_LOOP = '''
import torch
def fit(net, target, x, loader, beta=0.9, device="cpu"):
    feats = backbone(x)
    zeros = torch.zeros(3, device=device)
    cut = feats.detach()
    with torch.no_grad():
        frozen = backbone(x)
    image = x.clone()
    opt = torch.optim.Adam([image])
    for inputs, labels in loader:
        opt.zero_grad()
        out = net(inputs)
        fresh = criterion(out, labels) * beta + zeros.sum() + cut.mean() + frozen.mean()
        outside = criterion(out, target)
        fresh.backward()
        opt.step()
'''


def test_graph_state_of_names_before_the_loop():
    from torchlint.names import ModuleNames
    from torchlint.training.loop import find_training_loops

    module = cst.parse_module(_BEFORE_LOOP)
    (loop,) = find_training_loops(module, ModuleNames(module))
    states = {name: loop.graph_before_loop(name)
              for name in ("net", "target", "x", "beta", "device", "feats", "zeros", "cut", "frozen", "image")}
    assert states == {"net": "no", "target": "unknown", "x": "unknown", "beta": "no", "device": "no",
                      "feats": "yes", "zeros": "no", "cut": "no", "frozen": "no", "image": "no"}
    (backward,) = loop.backwards
    fresh, outside = (line.body[0].value for line in loop.node.body.body[2:4])
    assert loop.graph_brought_in(fresh, backward) is None
    assert loop.graph_brought_in(outside, backward) == "target"


_MODULES = '''
import torch.nn as nn
def build(cfg):
    layers = [nn.Linear(cfg["in"], cfg["hidden"]), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(cfg["hidden"], 2))
def shared(backbone):
    return nn.Sequential(backbone, nn.Linear(8, 2))
def f(backbone, dim, cfg, device):
    backbone.train()
    probe = nn.Linear(dim, 3)
    head = MLP(dim, 16).to(device)
    built = build(cfg)
    wrapped = nn.Sequential(backbone, nn.Linear(dim, 3))
    via_helper = shared(backbone)
    alias = backbone
    use(probe, head, built, wrapped, via_helper, alias)
'''


@pytest.mark.parametrize("name, new", [("probe", True), ("head", True), ("built", True), ("wrapped", False),
                                       ("via_helper", False), ("alias", False), ("backbone", False)])
def test_a_module_built_here_has_new_parameters(name, new):
    from torchlint.names import ModuleNames
    from torchlint.training import roles
    from torchlint.training.calls import Functions

    module = cst.parse_module(_MODULES)
    names = ModuleNames(module)
    functions = Functions(module, names)
    function = next(f for f in module.body if isinstance(f, cst.FunctionDef) and f.name.value == "f")
    flow = functions.flow(function)
    use = next(n.index for n in flow.graph.nodes
               if n.syntax is not None and module.code_for_node(n.syntax).strip().startswith("use("))
    scope = roles.ModuleScope(names, flow, functions)
    assert roles.builds_new_module(cst.Name(name), use, scope) is new


@pytest.mark.parametrize("body, name, expected", [
    ("""
        for x, y in loader:
            loss = model(x, y)
            loss.backward()  # <-
            log(loss.item())
     """, "loss", True),
    ("""
        for x, y in loader:
            loss = model(x, y)
            loss.backward()  # <-
            loss = None
            log(loss)
     """, "loss", False),
    ("""
        for x, y in loader:
            loss = model(x, y)
            loss.backward()  # <-
            total = 0
     """, "loss", False),
])
def test_a_value_read_again_later_in_the_iteration(body, name, expected):
    graph, flow, iteration, (node,) = _analyse(body)
    assert iteration.read_later((node, 0), name) is expected


@pytest.mark.parametrize("body, expected", [
    ("""
        for _ in loader:
            for (_, score), (_, real) in zip(a, b):
                use(score)
     """, False),
    ("""
        for batch in loader:
            use(batch)
     """, True),
])
def test_a_loop_target_is_read_only_where_the_body_reads_it(body, expected):
    graph, flow, iteration, _ = _analyse(body)
    bind = next(d for index in iteration.region.body for d in graph.nodes[index].definitions if d.kind == "target")
    assert iteration.read_later((bind.node, 0), bind.name) is expected


NAME_ONLY_ANOTHER_FUNCTION_BINDS = '''
import torch


class Trainer:
    def __init__(self, fp16):
        if fp16:
            from apex import amp
            amp.register_float_function(torch, "sigmoid")

    def train(self, loader, opt, fp16):
        for x in loader:
            loss = x.sum()
            if fp16:
                with amp.scale_loss(loss, opt) as scaled:
                    scaled.backward()
                opt.step()
            else:
                loss.backward()
            opt.zero_grad()
'''


@pytest.mark.parametrize("module_binds, raising", [(False, True), (True, False)])
def test_a_name_only_another_function_binds_raises_name_error_where_it_is_read(module_binds, raising):
    """`amp` is a local of `__init__`: `train` reading it raises NameError, so the `with` leaves the function
    and what follows it in that branch never runs. Bound at the top of the module, it is an ordinary read."""
    from torchlint.flow.scopes import bound_only_in_functions

    source = NAME_ONLY_ANOTHER_FUNCTION_BINDS.replace("import torch\n", "import torch\nfrom apex import amp\n") \
        if module_binds else NAME_ONLY_ANOTHER_FUNCTION_BINDS
    module = cst.parse_module(source)
    train = module.body[-1].body.body[1]
    graph = ControlFlowGraph(train, None, True, bound_only_in_functions(source))
    with_node = next(n for n in graph.nodes if isinstance(n.syntax, cst.With))
    step = next(n for n in graph.nodes if isinstance(n.syntax, cst.Expr) and "opt.step" in module.code_for_node(n.syntax))
    assert (with_node.index in graph.raising) is raising
    assert (not step.pred) is raising  # after the raise, the branch's step is never reached


@pytest.mark.parametrize("spelling", [
    "from apex import *", "from apex import*", "globals()['amp'] = None", "exec('import amp')", "eval ('1')",
    "vars()['amp'] = None", "locals()", "__builtins__.amp = None", "sys.modules['amp'] = None",
    "os.sys.modules['amp'] = None", "get_ipython().run_line_magic('load_ext', 'amp')",
])
def test_a_module_that_may_bind_names_it_does_not_spell_claims_no_name_error(spelling):
    from torchlint.flow.scopes import bound_only_in_functions

    assert "amp" in bound_only_in_functions(NAME_ONLY_ANOTHER_FUNCTION_BINDS)
    assert bound_only_in_functions(NAME_ONLY_ANOTHER_FUNCTION_BINDS + spelling + "\n") == frozenset()


@pytest.mark.parametrize("spelling", [
    "model.eval()", "self.exec(job)", "obj.globals()", "retrieval(x)", "my_locals()", "myimport * 2",
    "not_sys.modules = 1", "my_get_ipython()", "# a comment that says nothing of imports",
])
def test_spellings_that_only_look_like_unspelled_bindings_leave_the_claim(spelling):
    """A method named like one of them (`model.eval()`), or a longer word ending in one: no binding it hides."""
    from torchlint.flow.scopes import bound_only_in_functions

    assert "amp" in bound_only_in_functions(NAME_ONLY_ANOTHER_FUNCTION_BINDS + spelling + "\n")


@pytest.mark.parametrize("source, found", [
    ("import os\nfrom a import b\n", False),  # imports at the top level only: nothing to find
    ("import os\ndef f():\n    import amp\n", True),
    ("def f(): import amp\n", True),
    ("x = 1; import amp\n", True),
    ("if x:\n\tfrom apex.amp import scale\n", True),
    ("s = 'import'\nimportlib.reload(m)\n", False),
    ("x = 1\r\n  import amp\r\n", True),
])
def test_only_a_module_with_an_import_inside_a_block_is_compiled(source, found, monkeypatch):
    from torchlint.flow import scopes

    compiled = []
    real = scopes.symtable.symtable
    monkeypatch.setattr(scopes.symtable, "symtable", lambda *args: compiled.append(1) or real(*args))
    scopes.bound_only_in_functions(source)
    assert bool(compiled) is found


def test_a_local_a_nested_function_may_read_is_not_claimed_unbound():
    from torchlint.flow.scopes import bound_only_in_functions

    nested = "def outer():\n    from apex import amp\n    def inner():\n        return amp\n    return inner\n"
    assert "amp" not in bound_only_in_functions(nested)
    assert "amp" in bound_only_in_functions(nested.replace("    def inner():\n        return amp\n", ""))
    # a parameter or an assignment elsewhere is no import meant for the module: a snippet's free names stay reads
    assert bound_only_in_functions("def f(amp):\n    return amp\n\ndef g():\n    return amp\n") == frozenset()
