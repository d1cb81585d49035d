"""TL015 step-between-retained-backwards: an optimizer step between two backwards through one graph.

## What it does

Flags `optimizer.step()` in a training loop when, on every path of the
iteration, it runs after `a.backward(retain_graph=True)` and before a second
backward through the same graph, and the optimizer's model computed part of
what the two backwards share. The shared part is found from the
definitions that reach each backward's tensor: a value computed before the
first backward that both tensors are built from (`d_fake =
discriminator(fake)` in the discriminator's and the generator's loss); the
optimizer's model is read from its parameters (`Adam(discriminator.parameters())`).

## Why is this bad?

`retain_graph=True` keeps the graph for the second backward, and that
graph saved the model's weights to compute gradients through them. The
optimizer step updates those weights in place, so the second backward finds
saved tensors at a newer version and autograd raises "one of the variables
needed for gradient computation has been modified by an inplace operation".
This is the classic GAN ordering bug: the discriminator steps, then the
generator's loss, computed from the same discriminator forward, backpropagates
through the discriminator's old graph. (PyTorch before 1.5 did not check, and
silently used the wrong gradients.)

## Example

```python
for real in loader:
    fake = generator(torch.randn(real.size(0), latent_dim))
    d_fake = discriminator(fake)
    d_loss = bce(discriminator(real), ones) + bce(d_fake, zeros)
    opt_d.zero_grad()
    d_loss.backward(retain_graph=True)
    opt_d.step()
    g_loss = bce(d_fake, ones)
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
```

## Use instead

```python
for real in loader:
    fake = generator(torch.randn(real.size(0), latent_dim))
    d_loss = bce(discriminator(real), ones) + bce(discriminator(fake.detach()), zeros)
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    g_loss = bce(discriminator(fake), ones)
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
```

Not flagged: a second loss computed from a fresh forward after the step (a
new `discriminator(fake)` call, `fake.detach()`), a step of an optimizer
whose model the shared part does not use (the generator's step before the
discriminator's backward through a fresh forward), both backwards before
the steps, a step only some paths take between the backwards, and an
optimizer whose parameters the code does not show.

## Fix safety

No fix. Moving the step after the second backward is not the same training:
the second backward then adds its gradients to the stepped model's (the
generator's loss would train the discriminator too), and recomputing the
shared forward after the step changes what the second loss sees. Recompute
the shared part after the step (detaching what the first loss should not
train), or run both backwards first, each on its own parameters.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

import libcst as cst

from torchlint.context import FileContext
from torchlint.flow import Definition
from torchlint.model import ERROR
from torchlint.names import ModuleNames, dotted_name, keyword, positional
from torchlint.rules import Example, Finding, Rule
from torchlint.training import BackwardSite, StepSite, TrainingLoop, roles
from torchlint.training.graph import cuts, value_parts
from torchlint.walk import calls_in

_MAX_DEFINITIONS = 80
_LEAVING = frozenset({"detach", "detach_", "item", "tolist", "numpy"})


class StepBetweenRetainedBackwards(Rule):
    code = "TL015"
    name = "step-between-retained-backwards"
    severity = ERROR
    summary = "optimizer step between two backwards through one retained graph"

    def check(self, context: FileContext) -> Iterator[Finding]:
        reported: Set[int] = set()
        for loop in context.loops:
            backwards = [b for b in loop.backwards if b.depth == 0 and b.loss is not None and b.via is None]
            steps = [s for s in loop.optimizer_steps if s.depth == 0]
            if not steps:
                continue
            for first in backwards:
                if first.retain_graph is None:
                    continue
                first_graph = _graph_of(loop, first, context.names)
                if not first_graph:
                    continue
                for second in backwards:
                    if second is first or not loop.precedes(first, second):
                        continue
                    shared = [d for index, d in _graph_of(loop, second, context.names).items()
                              if index in first_graph]
                    found = _steps_between(loop, first, second, steps, shared, context.names)
                    if found is None:
                        continue
                    step, model, computed = found
                    if id(step.node) in reported:
                        continue
                    reported.add(id(step.node))
                    yield self._finding(context, first, second, step, model, computed)

    @staticmethod
    def _finding(context: FileContext, first: BackwardSite, second: BackwardSite, step: StepSite, model: str,
                 computed: Definition) -> Finding:
        shared = computed.name
        loss = context.code(second.loss) if second.loss is not None else "loss"
        loss = loss if isinstance(second.loss, (cst.Name, cst.Attribute)) else f"({loss})"
        restricted = f"`{loss}.backward(inputs=[...])` with only the parameters it should train"
        message = (
            f"`{context.site_code(step)}` updates `{model}`'s parameters in place between "
            f"`{context.code(first.node)}` and `{context.code(second.node)}`, which backpropagates through "
            f"the same retained graph (`{shared}`, computed by `{model}` before the first backward): autograd "
            f"raises \"one of the variables needed for gradient computation has been modified by an inplace "
            f"operation\". Recompute `{shared}` after the step (detach what the first loss should not train), "
            f"or run both backwards before stepping, each on its own parameters ({restricted}), so that "
            f"neither adds gradients to the parameters the other should train."
        )
        return Finding(step.node, message)

    valid = (
        # The generator's loss goes through a fresh discriminator forward after the step.
        """
for real in loader:
    fake = generator(noise())
    d_loss = bce(discriminator(fake), zeros) + bce(discriminator(real), ones)
    d_loss.backward(retain_graph=True)
    d_opt.step()
    g_loss = bce(discriminator(fake), ones)
    g_loss.backward()
    g_opt.step()
""",
        # Both backwards first, then the steps.
        """
import torch
d_opt = torch.optim.Adam(discriminator.parameters())
g_opt = torch.optim.Adam(generator.parameters())
for real in loader:
    d_fake = discriminator(generator(noise()))
    d_opt.zero_grad()
    g_opt.zero_grad()
    d_loss(d_fake, real).backward(retain_graph=True)
    d_grads = [p.grad.clone() for p in discriminator.parameters()]
    g_loss(d_fake).backward(inputs=list(generator.parameters()))
    d_opt.step()
    g_opt.step()
""",
        # The step is on an optimizer whose model the shared graph does not use.
        """
import torch
enc_opt = torch.optim.SGD(encoder.parameters(), lr=0.1)
head_opt = torch.optim.SGD(head.parameters(), lr=0.1)
for x, y in loader:
    features = backbone(x)
    head_opt.zero_grad()
    criterion(head(features), y).backward(retain_graph=True)
    head_opt.step()
    enc_opt.zero_grad()
    aux(encoder(x), features).backward()
    enc_opt.step()
""",
    )
    invalid = (
        Example(
            """
import torch
opt_d = torch.optim.Adam(discriminator.parameters(), lr=2e-4)
opt_g = torch.optim.Adam(generator.parameters(), lr=2e-4)
for real in loader:
    fake = generator(torch.randn(real.size(0), 64))
    d_fake = discriminator(fake)
    d_loss = bce(discriminator(real), ones) + bce(d_fake, zeros)
    opt_d.zero_grad()
    d_loss.backward(retain_graph=True)
    opt_d.step()
    g_loss = bce(d_fake, ones)
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
""",
            line=11,
        ),
        # The generator and encoder step every `n_critic` batches, between their retained backward and the
        # discriminator's backward through the same generated images.
        Example(
            """
import itertools
import torch
params = itertools.chain(generator.parameters(), encoder.parameters())
opt_ge = torch.optim.Adam(params, lr=1e-4)
opt_d = torch.optim.Adam(discriminator.parameters(), lr=1e-4)
for i, (x, _) in enumerate(loader):
    fake = generator(torch.randn(x.size(0), 32))
    d_fake = discriminator(fake)
    if i % n_critic == 0:
        opt_ge.zero_grad()
        ge_loss = -d_fake.mean() + mse(encoder(fake), z)
        ge_loss.backward(retain_graph=True)
        opt_ge.step()
    opt_d.zero_grad()
    d_loss = d_fake.mean() - discriminator(x).mean()
    d_loss.backward()
    opt_d.step()
""",
            line=14,
        ),
    )


def _graph_of(loop: TrainingLoop, backward: BackwardSite, names: ModuleNames) -> Dict[int, Definition]:
    """The definitions in this iteration whose values the backward's tensor is computed from, through
    every assignment that reaches it, stopping at what cuts the graph (`x.detach()`, `x.item()`)."""
    found: Dict[int, Definition] = {}
    pending: List[Tuple[str, int]] = [(name, backward.point[0]) for name in _graph_names(backward.loss)]
    seen: Set[Tuple[str, int]] = set()
    while pending and len(found) < _MAX_DEFINITIONS:
        name, at = pending.pop()
        if (name, at) in seen:
            continue
        seen.add((name, at))
        for definition in loop.reaching(name, at):
            if definition.kind not in ("assign", "augmented") or definition.value is None:
                continue
            if definition.index in found or cuts(definition, names):
                continue
            found[definition.index] = definition
            pending.extend((part, definition.node) for part in _graph_names(definition.value))
            if definition.kind == "augmented":
                pending.append((name, definition.node))
    return found


def _graph_names(node: cst.BaseExpression) -> List[str]:
    """The names whose values (and graphs) flow into `node`: operands, arguments, and the receiver of a
    method (`logits.log_softmax(-1).gather(1, idx)` keeps `logits`' graph), except through the methods that
    leave the graph (`x.detach()`, `x.item()`)."""
    if isinstance(node, (cst.Name, cst.Attribute)):
        name = dotted_name(node)
        return [name] if name is not None else []
    if isinstance(node, cst.Call):
        found = [name for arg in node.args for name in _graph_names(arg.value)]
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value not in _LEAVING:
            found += _graph_names(func.value)
        return found
    return [name for part in value_parts(node) for name in _graph_names(part)]


def _steps_between(loop: TrainingLoop, first: BackwardSite, second: BackwardSite, steps: List[StepSite],
                   shared: List[Definition], names: ModuleNames) -> Optional[Tuple[StepSite, str, Definition]]:
    """(the step, its model, the shared value that model computed) when steps of optimizers whose models
    computed part of the shared graph lie on every path from `first` to `second`."""
    if not shared:
        return None
    touching: List[Tuple[StepSite, str, Definition]] = []
    for step in steps:
        if not (loop.precedes(first, step) and loop.precedes(step, second)):
            continue
        models = _optimized_models(loop, step.receiver, names)
        for definition in shared:
            model = _model_called(definition.value, models, names)
            if model is not None:
                touching.append((step, model, definition))
                break
    if not touching:
        return None
    avoiding = frozenset(step.point[0] for step, _, _ in touching)
    if loop.reaches(first, second, avoiding, around=False):
        return None  # some path from the first backward to the second does not step
    return touching[0]


def _optimized_models(loop: TrainingLoop, optimizer: str, names: ModuleNames) -> FrozenSet[str]:
    """The models whose parameters `optimizer` holds: `Adam(disc.parameters())`, also through a name
    bound to them (`params = chain(g.parameters(), e.parameters()); Adam(params)`)."""
    models = set(dict(loop.optimizer_models).get(optimizer, frozenset()))
    for value in names.values_of(optimizer):
        if not isinstance(value, cst.Call):
            continue
        passed = positional(value, 0) or keyword(value, "params")
        name = dotted_name(passed) if passed is not None else None
        if name is None:
            continue
        for bound in names.values_of(name):
            models |= roles.parameter_owners(bound, names)
    return frozenset(models)


def _model_called(value: cst.BaseExpression, models: FrozenSet[str], names: ModuleNames) -> Optional[str]:
    """The model among `models` that `value` calls (`discriminator(x)`, `self.D.forward(x)`)."""
    for call in calls_in(value):
        callee = dotted_name(call.func)
        if callee is None:
            continue
        module = callee[:-len(".forward")] if callee.endswith(".forward") else callee
        # `self.trunk, self.head = trunk, head`: the unpacked names are the same modules.
        bound = {dotted_name(v) for v in names.values_of(module)} | names.aliases_of(module)
        for model in sorted(models):
            # `self.parameters()` (a LightningModule) holds every submodule: `self.D(x)` calls one.
            if model in bound or (model != "self" and roles.same_module(module, model)):
                return module
    return None
