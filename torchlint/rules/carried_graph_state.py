"""TL012 carried-graph-state: model output fed back as input keeps the whole history's graph.

## What it does

Flags a tensor produced by the model in one iteration and fed back as its
input in the next (`out, h = rnn(x, h)`, `out, (h, c) = lstm(x, (h, c))`,
`state = model(state)`) in a loop that calls `backward()`, when nothing
detaches it whenever a backward runs (`h = h.detach()`, `repackage_hidden(h)`,
`state = (state[0].detach(), state[1].detach())`, also right after a
truncated-BPTT window's backward) or re-initialises it each iteration. A loop whose
backward is on a loss summed across iterations is left to TL001: once that
backward moves after the loop, carrying the state is plain backpropagation
through time.

## Why is this bad?

The state carries the graph of the iteration that produced it. The next
`backward()` walks back into that graph, whose buffers the previous backward
freed: "Trying to backward through the graph a second time". Adding
`retain_graph=True` turns the crash into a leak: the graph then spans every
iteration since the start, so each backward gets slower and memory grows
until it runs out.

## Example

```python
hidden = torch.zeros(1, batch, size)
for x, y in batches:
    out, hidden = rnn(x, hidden)
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
```

## Use instead

```python
hidden = torch.zeros(1, batch, size)
for x, y in batches:
    hidden = hidden.detach()
    out, hidden = rnn(x, hidden)
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
```

Not flagged: state detached before it is reused (or passed in detached:
`rnn(x, h.detach())`; `h = h.data` and the old `Variable(h.data)` cut it
too), re-initialised each iteration, or computed under
`torch.no_grad()`. Nor a module a helper hands back with its outputs
(`model, preds, loss = forward_step(model, batch)`, where every `return` of
`forward_step`, in this file or another of the project, gives the `model` it
was given): the name holds the very object passed, not a tensor computed
from it; nor a name the loop's function calls as a model (`model(x)`) or
reads the parameters of (`Adam(model.parameters())`): a module carries no
graph. Nor a value whose producer's code (a function of this file, the
method of the project's classes the receiver is built from, or the
`forward` of the project's class the model is built from, found through a
package's `__init__.py` that imports it again, also when the model is moved
as it is built, `Net(d).to(device)`, or built in a conditional expression,
`Net(d).cuda() if cuda else Net(d)`) shows no forward pass
entering the slot it hands back: a running reward baseline filled under
`torch.no_grad()` from `torch.zeros(...)` and blended with the one handed
back in; memories a model's `forward` collects from its layers (`x, mem =
layer(x, mem)`, `memories.append(mem)`), which each layer may detach
itself: what a layer hands back beside its output is unknown unless the
layer is a torch recurrent module (`nn.GRU`, `nn.LSTM`). Memories
collected from the layers' own outputs (`x = layer(x)`,
`memories.append(x)`) carry the graph: flagged. A detach that runs only
every few iterations (`if i % k == 0: h = h.detach()`) while backward runs
on every one is still flagged.

## Fix safety

Safe when the code shows what the state is and the loop does not pass
`retain_graph=True`: the state comes from a torch recurrent module (`nn.GRU`,
`nn.LSTM`...), starts as a tensor from a torch factory before the loop, or
is unpacked by name (`out, (h, c) = ...`). The code cannot run a second
iteration as written, and truncating backpropagation at the window boundary
is what every recurrent training loop does. Unsafe otherwise: `h.detach()`
on a state that is really a tuple or a dict would raise, and with
`retain_graph=True` detaching changes which gradients are computed. The fix
inserts `h = h.detach()` at the top of the loop body (for an `nn.LSTM`'s
`(h, c)` tuple, each element is detached; a state that starts as `None` is
detached only once it exists).
"""

from __future__ import annotations

from typing import Iterator, List, Optional, Set

import libcst as cst

from torchlint.context import FileContext
from torchlint.model import ERROR, SAFE, UNSAFE, Fix
from torchlint.names import ModuleNames, dotted_name, last_component
from torchlint.rules import Example, Finding, Rule
from torchlint.training import Assignment, TrainingLoop, graph


class CarriedGraphState(Rule):
    code = "TL012"
    name = "carried-graph-state"
    severity = ERROR
    summary = "model output fed back as input across iterations without `detach()`"

    def check(self, context: FileContext) -> Iterator[Finding]:
        for loop in context.loops:
            if not loop.own_backwards or _backwards_on_accumulators(loop):
                continue
            groups = {}  # `out, (h, c) = lstm(x, (h, c))` carries two names in one statement: one finding
            for state in _fed_back_states(loop, context.names):
                groups.setdefault(id(state.node), []).append(state)
            for states in groups.values():
                state = states[0]
                name = ", ".join(f"`{s.target}`" for s in states)
                verb = "are" if len(states) > 1 else "is"
                producer = context.code(state.value.func) if isinstance(state.value, cst.Call) else "the model"
                retained = any(b.retain_graph is not None for b in loop.backwards if b.via is None)
                consequence = (
                    "with `retain_graph=True` the graph spans every iteration so far and memory grows until "
                    "it runs out" if retained else
                    "the next `backward()` goes back into the previous iteration's freed graph: RuntimeError "
                    "'Trying to backward through the graph a second time'"
                )
                message = (
                    f"{name} {verb} produced by `{producer}` and fed back into it on the next iteration without "
                    f"`.detach()`: {consequence}."
                )
                yield Finding(state.node, message, self._fix(context, loop, states, retained))

    def _fix(self, context: FileContext, loop: TrainingLoop, states: List[Assignment], retained: bool):
        first = loop.first_body_statement
        if first is None:
            return None
        names, values = [], []
        known = True
        for state in states:
            name = state.target
            kind = _state_kind(loop, state, context.names)
            known = known and kind is not None
            detached = f"tuple(part.detach() for part in {name})" if kind == "tuple" else f"{name}.detach()"
            initial = loop.value_before_loop(name)
            if initial is None or (isinstance(initial, cst.Name) and initial.value == "None"):
                detached = f"None if {name} is None else {detached}"
                if len(states) > 1:
                    detached = f"({detached})"
            names.append(name)
            values.append(detached)
        targets = ", ".join(names)
        # Safe only where the code shows what the state is: a tensor (or an LSTM's tuple of them).
        return Fix(
            SAFE if known and not retained else UNSAFE,
            f"Detach `{targets}` at the top of the loop body",
            (context.insert_line_before(first, f"{targets} = {', '.join(values)}"),),
        )

    valid = (
        """
hidden = torch.zeros(1, 4, 8)
for x, y in batches:
    hidden = hidden.detach()
    out, hidden = rnn(x, hidden)
    criterion(out, y).backward()
    optimizer.step()
""",
        """
for x, y in batches:
    hidden = repackage_hidden(hidden)
    out, hidden = model(x, hidden)
    criterion(out, y).backward()
""",
        # Re-initialised every iteration.
        """
for x, y in batches:
    hidden = model.init_hidden(x.size(0))
    out, hidden = model(x, hidden)
    criterion(out, y).backward()
""",
        # State computed under no_grad carries no graph.
        """
import torch
for x, y in batches:
    with torch.no_grad():
        memory = encoder(x, memory)
    criterion(decoder(x, memory), y).backward()
""",
        # Truncated BPTT: detached whenever the window's backward runs.
        """
loss = 0
for t in range(seq_len):
    out, hidden = cell(x[t], hidden)
    loss = loss + criterion(out, y[t])
    if (t + 1) % k == 0:
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        hidden = hidden.detach()
        loss = 0
""",
        # The backward is on a loss summed over the time steps: TL001's to report.
        """
loss = 0
for t in range(seq_len):
    out, hidden = cell(x[t], hidden)
    loss = loss + criterion(out, y[t])
    loss.backward(retain_graph=True)
""",
        # The `(h, c)` tuple detached right after the forward pass.
        """
for x, y in batches:
    out, state = lstm(x, state)
    state = (state[0].detach(), state[1].detach())
    criterion(head(out), y).backward()
    optimizer.step()
""",
        # A comprehension variable that shares the target's name is not state.
        """
for start in range(0, len(loader), 4):
    window = loader[start:start + 4]
    x = torch.cat([x for x, _ in window])
    y = torch.cat([y for _, y in window])
    F.mse_loss(model(x), y).backward()
    optimizer.step()
    optimizer.zero_grad()
""",
    )
    invalid = (
        Example(
            """
import torch
hidden = torch.zeros(1, 4, 8)
for x, y in batches:
    out, hidden = rnn(x, hidden)
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
""",
            line=5,
            fixed="""
import torch
hidden = torch.zeros(1, 4, 8)
for x, y in batches:
    hidden = hidden.detach()
    out, hidden = rnn(x, hidden)
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
""",
        ),
        Example(
            """
import torch.nn as nn
lstm = nn.LSTM(8, 16)
state = None
for x, y in batches:
    out, state = lstm(x, state)
    criterion(head(out), y).backward(retain_graph=True)
    optimizer.step()
    optimizer.zero_grad()
""",
            line=6,
            fixed="""
import torch.nn as nn
lstm = nn.LSTM(8, 16)
state = None
for x, y in batches:
    state = None if state is None else tuple(part.detach() for part in state)
    out, state = lstm(x, state)
    criterion(head(out), y).backward(retain_graph=True)
    optimizer.step()
    optimizer.zero_grad()
""",
            unsafe=True,
        ),
        Example(
            """
while step < total:
    state = model(state)
    loss = (state - target).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    step += 1
""",
            line=3,
            fixed="""
while step < total:
    state = None if state is None else state.detach()
    state = model(state)
    loss = (state - target).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    step += 1
""",
            unsafe=True,
        ),
        # Both tensors of an LSTM's state, unpacked in place: one finding for the statement.
        Example(
            """
import torch
h = torch.zeros(2, 4, 16)
c = torch.zeros(2, 4, 16)
for x, y in batches:
    out, (h, c) = lstm(x, (h, c))
    criterion(head(out), y).backward()
    optimizer.step()
    optimizer.zero_grad()
""",
            line=6,
            fixed="""
import torch
h = torch.zeros(2, 4, 16)
c = torch.zeros(2, 4, 16)
for x, y in batches:
    h, c = h.detach(), c.detach()
    out, (h, c) = lstm(x, (h, c))
    criterion(head(out), y).backward()
    optimizer.step()
    optimizer.zero_grad()
""",
        ),
    )


def _backwards_on_accumulators(loop: TrainingLoop) -> bool:
    """Every backward is on a loss summed across iterations: TL001 reports it, and its fix moves
    the backward out of the loop, after which carrying the state is plain backpropagation through time."""
    return all(loop.backward_on_accumulator(backward) is not None for backward in loop.own_backwards)


def _fed_back_states(loop: TrainingLoop, names: ModuleNames) -> List[Assignment]:
    """`h = rnn(x, h)` whose graph reaches a backward and then, still attached, the next `rnn(x, h)`.

    The path is followed in the control-flow graph: a re-initialisation, a
    detach (`h = h.detach()`, `h.detach_()`, each element detached in place,
    `repackage_hidden(h)`) or `del h` on it cuts it; `tuple(h)` does not. A
    detach that runs right after every backward (truncated BPTT) cuts every
    such path, as does one at the top of the body.
    """
    feeding: Set[str] = set()
    for backward in loop.own_backwards:
        if backward.loss is not None:
            feeding |= loop.feeding_names(backward.loss, backward)
    states = []
    seen: Set[str] = set()
    for update in loop.assignments:
        name = update.target
        if name in seen or name not in feeding or update.depth != 0:
            continue
        if not graph.feeds_itself(update.value, name, names) or graph.cuts(update.definition, names):
            continue  # `mean_path = regularize(x, mean_path)` that returns `path_mean.detach()`: no graph
        if loop.fed_back_graph(update) not in (None, graph.YES):
            continue  # the producer's code shows no graph entering what it hands back (a running baseline
            # filled under `no_grad()`), or does not show one: not a model's output
        if loop.holds_module(name) or dotted_name(loop.handed_back(update.definition)) == name:
            continue  # `model, preds = forward(model, x)`: the module handed back, not a tensor computed from it
        if not loop.iteration.carried(update.point[0], name):
            continue
        seen.add(name)
        if loop.grad_disabled_at(update, names) is not None:
            continue
        cuts = loop.fresh_definitions(name)
        if any(loop.reaches(update, backward, cuts) and loop.reaches(backward, update, cuts)
               for backward in loop.own_backwards):
            states.append(update)
    return states


_TENSOR_STATES = frozenset({"torch.nn.RNN", "torch.nn.GRU", "torch.nn.RNNCell", "torch.nn.GRUCell"})
_TUPLE_STATES = frozenset({"torch.nn.LSTM", "torch.nn.LSTMCell"})
_FACTORIES = frozenset({"zeros", "ones", "randn", "rand", "empty", "zeros_like", "ones_like", "randn_like", "full"})


def _state_kind(loop: TrainingLoop, state: Assignment, names: ModuleNames) -> Optional[str]:
    """"tensor" or "tuple" when the code shows what the state is, else None.

    The producer is a torch recurrent module (`nn.GRU` gives a tensor, `nn.LSTM` an `(h, c)` tuple);
    or the state starts as a tensor from a torch factory before the loop and comes back in its place;
    or it is one name of a nested unpacking, `out, (h, c) = lstm(...)`.
    """
    value = state.value
    callee = dotted_name(value.func) if isinstance(value, cst.Call) else None
    constructors = set(names.constructors_of(callee)) if callee else set()
    if _nested_target(state.node, state.target) or constructors & _TENSOR_STATES:
        return "tensor"
    if constructors & _TUPLE_STATES:
        return "tuple"
    initial = loop.value_before_loop(state.target)
    if isinstance(initial, cst.Call):
        qualified = names.callee(initial) or ""
        if qualified.startswith("torch.") and last_component(qualified) in _FACTORIES:
            return "tensor"
    return None


def _nested_target(node: cst.CSTNode, name: str) -> bool:
    """`h` in `out, (h, c) = ...`: assigned from inside a nested tuple target."""
    if not isinstance(node, cst.Assign):
        return False
    for target in node.targets:
        if isinstance(target.target, (cst.Tuple, cst.List)):
            for element in target.target.elements:
                inner = element.value
                if isinstance(inner, (cst.Tuple, cst.List)) and name in {dotted_name(e.value) for e in inner.elements}:
                    return True
    return False
