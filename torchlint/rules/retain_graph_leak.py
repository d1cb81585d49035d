"""TL005 retain-graph-leak: `retain_graph=True` on the last backward through a graph.

## What it does

Flags `loss.backward(retain_graph=True)` (also `torch.autograd.backward(...,
retain_graph=True)` and `torch.autograd.grad(..., retain_graph=True)`) in a
training loop when no later backward or `grad` call in the same iteration
could go through that graph: none comes after it, or every later one is
computed from other graph nodes (a second forward of the same module makes
new ones: a GAN's generator step that runs `D(G(z))` again, an actor loss
from the actor's own forward after the critic's loss). The same holds for a
function the loop calls once per iteration (an agent's `update()`): its last
retained backward, when the graph is made in that call and never leaves
it, is reported there (what the loop passes it counts as made in that call
when it carries no graph: the loop's own batch). It is an **error** when the retained tensor
carries its graph into the next iteration (the graph then grows every
iteration), and a **warning** otherwise. A retained loss *accumulator* is
left to TL001, and model state fed back as input to TL012.

## Why is this bad?

`retain_graph=True` keeps every saved activation of the forward pass alive
after the backward. That is needed only when a second backward goes through
the same graph (a GAN's shared generator output, several heads on one
trunk). On the last backward it only holds memory until the tensors die; if
the tensor is carried into the next iteration, nothing is ever freed and
memory grows until the process runs out.

## Example

```python
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward(retain_graph=True)
    optimizer.step()
    optimizer.zero_grad()
```

## Use instead

```python
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
```

Not flagged: several backward calls through one shared graph where only the
last omits `retain_graph` (a shared encoder's features, the actor's action
in both the critic's and the actor's loss, outputs collected in a list that
a later loss reads), `create_graph=True` (higher-order gradients
use the graph again), and a graph built before the loop that every iteration
backpropagates through again (`features = backbone(x)`, then one head's
backward per iteration). Nor a loss computed from a value that comes from
before the loop when the code does not show whether it carries a graph: a
parameter (`target` in `def fit(net, target, x)`, the targets a style
transfer computes once and passes in), an attribute set elsewhere
(`self.target`). If it does, the next iteration backpropagates through it
again, and `retain_graph=True` is what keeps that working. Nor when a value
made from the graph outlives the iteration: added into a total that the next
iteration or the code after the loop reads (`total = total + part`, then
`(total / n).backward()` after the loop), or stored in an attribute or an
element (`self.last = part`): a later backward may go through it.

## Fix safety

Safe when the code shows every precondition: no later backward in the
iteration (nor in a function the loop calls) goes through the graph on any
path (every later loss is built from other nodes, as far as the code shows),
everything the loss is computed from is made in the iteration or carries no
graph (the loop's own batch, numbers, detached values, torch factories,
values computed under `torch.no_grad()`), and the graph is not carried
across iterations. The fix drops `retain_graph=True`; gradients are
unchanged and the graph is freed at once. No fix when the graph is carried:
the retained graph is then used by the next iteration, and detaching it is
a decision about what to train. No fix in a function the loop calls: the
edit would change every caller of it.
"""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from torchlint.context import FileContext
from torchlint.model import ERROR, SAFE, WARNING, Fix
from torchlint.names import dotted_name, iter_names, keyword, positional, prefixes
from torchlint.rules import Example, Finding, Rule
from torchlint.training import BackwardSite, TrainingLoop
from torchlint.training import graph
from torchlint.training.graph import feeds_itself, value_names


class RetainGraphLeak(Rule):
    code = "TL005"
    name = "retain-graph-leak"
    severity = WARNING
    severity_text = "warning; error when the retained graph is carried into the next iteration"
    summary = "`retain_graph=True` on the last backward through a graph"

    def check(self, context: FileContext) -> Iterator[Finding]:
        reported = set()
        for loop in context.loops:
            for backward in (b for b in loop.backwards if b.via is not None):
                if id(backward.node) not in reported and _last_in_its_function(loop, backward):
                    reported.add(id(backward.node))  # one finding, however many loops call the function
                    yield self._called_finding(context, backward)
            for backward in (b for b in loop.backwards if b.via is None):
                if backward.retain_graph is None or backward.create_graph or backward.loss is None:
                    continue
                if _later_backward(loop, backward) or not _graph_built_in_iteration(loop, backward):
                    continue
                if _kept_past_iteration(loop, backward):
                    continue  # a backward after this iteration (or after the loop) may go through it
                if _graph_from_before(loop, backward) is not None:
                    continue  # the next iteration backpropagates through that graph again
                carried = _carried_source(loop, backward)
                if carried == "owned-elsewhere":
                    continue
                if carried is None and _input_from_outside(loop, backward) is not None:
                    continue  # a graph may enter through it, which the next iteration needs again
                yield self._finding(context, backward, carried)

    def _finding(self, context, backward: BackwardSite, carried: Optional[str]) -> Finding:
        call = context.code(backward.node)
        loss = context.code(backward.loss)
        if carried is not None:
            message = (
                f"`{call}` keeps the graph alive and `{carried}` carries it into the next iteration: "
                f"the retained graph grows every iteration until memory runs out."
            )
            return Finding(backward.node, message, None, ERROR)
        message = (
            f"`{call}` is the last backward through this graph in the iteration: the retained graph "
            f"(every saved activation) stays in memory until `{loss}` is overwritten. Drop `retain_graph=True`."
        )
        fix = None
        if backward.retain_graph.keyword is not None:
            args = [arg for arg in backward.node.args if arg is not backward.retain_graph]
            if args:
                args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            fixed = context.code(backward.node.with_changes(args=args))
            fix = Fix(SAFE, "Drop `retain_graph=True`", (context.replace(backward.node, fixed),))
        return Finding(backward.node, message, fix, WARNING)

    def _called_finding(self, context, backward: BackwardSite) -> Finding:
        call, loss, function = context.code(backward.node), context.code(backward.loss), backward.via.name
        message = (
            f"`{call}` is the last backward through this graph in `{function}()`: the retained graph (every "
            f"saved activation of `{loss}`) stays in memory until `{function}()` returns. Drop `retain_graph=True`."
        )
        return Finding(backward.node, message, None, WARNING)

    valid = (
        # GAN: the discriminator's backward retains, the generator's reuses the graph.
        """
for real in loader:
    fake = generator(noise())
    d_loss = bce(disc(fake), zeros) + bce(disc(real), ones)
    d_loss.backward(retain_graph=True)
    d_opt.step()
    g_loss = bce(disc(fake), ones)
    g_loss.backward()
    g_opt.step()
    d_opt.zero_grad()
    g_opt.zero_grad()
""",
        # Higher-order gradients.
        """
for x, y in loader:
    loss = criterion(model(x), y)
    grads = torch.autograd.grad(loss, model.parameters(), create_graph=True, retain_graph=True)
    penalty = sum(g.pow(2).sum() for g in grads)
    (loss + penalty).backward()
""",
        # A retained accumulator is TL001's to report.
        """
loss = 0
for out in outputs:
    loss += criterion(out, y)
    loss.backward(retain_graph=True)
""",
        # Hidden state fed back is TL012's to report.
        """
for x, y in loader:
    out, hidden = rnn(x, hidden)
    loss = criterion(out, y)
    loss.backward(retain_graph=True)
    optimizer.step()
""",
        # A target handed in by the caller may carry a graph that every iteration goes through again.
        """
def fit(net, target, x, steps):
    for _ in range(steps):
        loss = mse(net(x), target)
        loss.backward(retain_graph=True)
        optimizer.step()
""",
        # The critic's loss takes the actor's action undetached; the actor's loss goes through it again.
        """
for state, target in loader:
    action = actor(state)
    critic_loss = mse(critic(state, action), target)
    critic_loss.backward(retain_graph=True)
    critic_opt.step()
    actor_loss = -critic(state, action).mean()
    actor_loss.backward()
    actor_opt.step()
""",
        # Features computed before the loop: the next head backpropagates through them again.
        """
features = backbone(images)
for head, target in zip(heads, targets):
    head_loss = criterion(head(features), target)
    head_loss.backward(retain_graph=True)
optimizer.step()
""",
    )
    invalid = (
        Example(
            """
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward(retain_graph=True)
    optimizer.step()
    optimizer.zero_grad()
""",
            line=4,
            fixed="""
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
""",
        ),
        Example(
            """
import torch
for x, y in loader:
    l1 = head_a(trunk(x)).mean()
    l2 = head_b(trunk(x)).mean()
    torch.autograd.backward([l1, l2], retain_graph=True)
    optimizer.step()
""",
            line=6,
            fixed="""
import torch
for x, y in loader:
    l1 = head_a(trunk(x)).mean()
    l2 = head_b(trunk(x)).mean()
    torch.autograd.backward([l1, l2])
    optimizer.step()
""",
        ),
        Example(
            """
for real, z, ones, zeros in loader:
    fake = generator(z)
    d_loss = bce(disc(real), ones) + bce(disc(fake), zeros)
    d_loss.backward(retain_graph=True)
    d_opt.step()
    fake = generator(z)
    g_loss = bce(disc(fake), ones)
    g_loss.backward()
    g_opt.step()
""",
            line=5,
            fixed="""
for real, z, ones, zeros in loader:
    fake = generator(z)
    d_loss = bce(disc(real), ones) + bce(disc(fake), zeros)
    d_loss.backward()
    d_opt.step()
    fake = generator(z)
    g_loss = bce(disc(fake), ones)
    g_loss.backward()
    g_opt.step()
""",
        ),
        Example(
            """
smooth = 0
for x, y in loader:
    loss = criterion(model(x), y)
    smooth = 0.9 * smooth + 0.1 * loss
    smooth.backward(retain_graph=True)
    optimizer.step()
    optimizer.zero_grad()
""",
            line=6,
        ),
    )


def _later_backward(loop: TrainingLoop, backward: BackwardSite) -> bool:
    """Another backward or grad call could still go through this graph in the iteration (also one that a
    function the loop calls runs). A later backward directly in the loop whose loss the code shows to be
    built from other graph nodes (`actor_loss` from `actor(state)` after `critic_loss` from
    `critic(state)`; a second `D(G(z))` forward after the discriminator's) does not go through it."""
    for other in loop.backwards:
        if other is backward:
            continue
        if backward.depth > 0 and other.depth >= backward.depth:
            return True
        if loop.precedes(backward, other) and _may_go_through(loop, backward, other):
            return True
    return False


def _kept_past_iteration(loop: TrainingLoop, backward: BackwardSite) -> bool:
    """A value computed from the backward's graph outlives the iteration: added into a total that the next
    iteration reads or the loop leaves (`total = total + part`, backpropagated after the loop), or stored in an
    attribute or an element (`self.last = part`, `kept[i] = part`), sharing a node the code shows. A backward
    after this iteration may then go through the graph, and retaining it may be what makes that possible."""
    if backward.loss is None:
        return True
    own = loop.graph_nodes(backward.loss, backward)
    feeding = loop.feeding_names(backward.loss, backward)  # a total the loss is made from: `_carried_source`
    for assignment in loop.assignments:
        if assignment.value is None or assignment.node is backward.node or assignment.target in feeding:
            continue
        kept = "." in assignment.target or "[" in assignment.target or loop.carried(assignment.target) is not None \
            or loop.flow.read_after(loop.iteration.region, assignment.target)
        if kept and own.nodes & loop.graph_nodes(assignment.value, assignment).nodes:
            return True
    return bool(own.opaque)


def _may_go_through(loop: TrainingLoop, backward: BackwardSite, other: BackwardSite) -> bool:
    """`other`, a backward after `backward`, may reach a node of `backward`'s graph."""
    if backward.loss is None or other.loss is None or other.via is not None:
        return True
    return loop.graph_nodes(backward.loss, backward).may_share(loop.graph_nodes(other.loss, other))


def _last_in_its_function(loop: TrainingLoop, backward: BackwardSite) -> bool:
    """A retained backward that a function of this file, called by the loop, runs once per call (`update()` of
    an agent), where the code shows that nothing goes through its graph again: every node of it is made in that
    run of the function (no parameter, no attribute set elsewhere), no later backward of the run reaches one,
    and none leaves the function (returned, stored in an attribute or a container)."""
    via = backward.via
    if backward.retain_graph is None or backward.create_graph or backward.loss is None or backward.depth > 0 \
            or via.elsewhere is not None or not via.direct or via.flow.graph.nodes[via.node].loops:
        return False
    own = loop.call_graph_nodes(via, backward.loss, via.node)
    if not own.nodes or not own.shown:
        return False
    for other in loop.backwards:
        if other is backward:
            continue
        if other.via is None or other.via.call is not via.call:
            continue  # runs outside this call: it cannot reach what never leaves the function
        if other.via.function is not via.function or other.loss is None:
            return False  # a function this one calls may be handed the graph
        if other.via.order > via.order and own.may_share(loop.call_graph_nodes(via, other.loss, other.via.node)):
            return False
    for value, node in _leaving(via):
        leaving = loop.call_graph_nodes(via, value, node)
        if own.nodes & leaving.nodes or leaving.opaque:
            return False
    return True


def _leaving(via) -> Iterator[tuple]:
    """The values that leave a function's run, with their control-flow nodes: what it returns or yields, and what
    it stores in an attribute, a subscript or a container (`self.last = loss`, `history.append(loss)`)."""
    for node in via.flow.graph.nodes:
        syntax = node.syntax
        if isinstance(syntax, cst.Return) and syntax.value is not None:
            yield syntax.value, node.index
        elif isinstance(syntax, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and syntax.value is not None:
            targets = [t.target for t in syntax.targets] if isinstance(syntax, cst.Assign) else [syntax.target]
            if any(not _local(target) for target in targets):
                yield syntax.value, node.index
        elif isinstance(syntax, cst.Expr):
            value = syntax.value
            if isinstance(value, (cst.Yield, cst.Await)):
                yield value, node.index  # read whole: the walk cannot follow it, so it stays quiet
            elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
                for arg in value.args:
                    yield arg.value, node.index


def _local(target: cst.BaseExpression) -> bool:
    """An assignment target that binds local names only (`q, _ =`), not an attribute or an element."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return all(_local(element.value) for element in target.elements)
    if isinstance(target, cst.StarredElement):
        return _local(target.value)
    return isinstance(target, cst.Name)


def _carried_source(loop: TrainingLoop, backward: BackwardSite) -> Optional[str]:
    """The name that carries the retained graph into the next iteration, if any.

    Returns "owned-elsewhere" when that name is a loss accumulator (TL001)
    or model state fed back as input (TL012).
    """
    for name in sorted(loop.feeding_names(backward.loss, backward)):
        update = loop.carried(name)
        if update is None:
            continue
        if loop.accumulator(name) is not None or feeds_itself(update.value, name, loop.names):
            return "owned-elsewhere"
        return name
    return None



def _graph_built_in_iteration(loop: TrainingLoop, backward: BackwardSite) -> bool:
    """The backward's tensors are computed in this iteration, not before the loop.

    `for out in outputs: out.sum().backward(retain_graph=True)` walks one graph,
    built before the loop, once per iteration; `loss = f(model(x))` builds a new one.
    """
    if backward.loss is None:
        return False
    parts = backward.loss.elements if isinstance(backward.loss, (cst.List, cst.Tuple)) else (backward.loss,)
    for part in parts:
        root = _root_name(part.value if isinstance(part, cst.BaseElement) else part)
        if root is not None and not any(_computed_here(loop, candidate, backward) for candidate in prefixes(root)):
            return False
    return True


def _computed_here(loop: TrainingLoop, name: str, backward: BackwardSite) -> bool:
    """`name` gets its value from an assignment in this iteration (not only from the loop's target)."""
    return any(d.kind in ("assign", "augmented") for d in loop.reaching(name, backward))


def _graph_from_before(loop: TrainingLoop, backward: BackwardSite) -> Optional[str]:
    """A tensor computed before the loop by a forward pass that the backward's loss is built from.

    `features = backbone(x)` then `for head in heads: criterion(head(features), y).backward(
    retain_graph=True)`: every iteration backpropagates through `features`' graph again.
    """
    if backward.loss is None:
        return None
    targets = set(iter_names(loop.node.target)) if isinstance(loop.node, cst.For) else set()
    for name in sorted(loop.flow_names(backward.loss, backward, value_names)):
        if name in targets or not all(d.kind == "start" for d in loop.reaching(name, backward)):
            continue
        if loop.graph_before_loop(name) == graph.YES:
            return name
    return None


def _input_from_outside(loop: TrainingLoop, backward: BackwardSite) -> Optional[str]:
    """A value the loss is computed from that comes from before the loop and may carry a graph the code
    does not show (`target` in `def fit(net, target, x)`, `self.target`): whether the next iteration
    backpropagates through it again is then unknown, and so is whether this backward is the last one
    through it. Nothing behind the `inputs` of `torch.autograd.grad(loss, params)` is walked."""
    if backward.loss is None:
        return None
    stops: frozenset = frozenset()
    inputs = keyword(backward.node, "inputs") or (positional(backward.node, 1) if backward.kind == "grad" else None)
    if backward.kind in ("grad", "autograd") and inputs is not None:
        stops = frozenset(iter_names(inputs))
    return loop.graph_brought_in(backward.loss, backward, stops)


def _root_name(node: cst.BaseExpression) -> Optional[str]:
    """`out` for `out[0].sum()`; None for a fresh call like `criterion(out, y)`."""
    while True:
        if isinstance(node, cst.Call):
            if not isinstance(node.func, cst.Attribute):
                return None
            node = node.func.value
        elif isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, (cst.Name, cst.Attribute)):
            return dotted_name(node)
        else:
            return None
