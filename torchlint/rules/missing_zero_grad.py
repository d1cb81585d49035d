"""TL002 missing-zero-grad: a training loop steps an optimizer but never resets gradients.

## What it does

Flags `optimizer.step()` (or `scaler.step(optimizer)`) in a loop that calls
`backward()` when nothing in the loop resets gradients: no
`optimizer.zero_grad()`, no `model.zero_grad()`, no `p.grad = None` or
`p.grad.zero_()` over parameters, no gradient replaced over them (`for g, p in
zip(grads, model.parameters()): p.grad = g`, a value that does not read
`p.grad`), and no call to a helper defined in the same file that does one of
these. A reset before the loop only runs once, so it
does not count. A module's reset counts for the optimizers that hold that
module's parameters: in a GAN, `netD.zero_grad()` does not reset
`optimizerG = Adam(netG.parameters())`. A class of this file is an
optimizer when it derives from `torch.optim.Optimizer`, and none when no
method of it touches a gradient (a weight average's `ema_optimizer.step()`).
An optimizer over several modules
(InfoGAN's `info_optimizer = Adam(itertools.chain(G.parameters(),
D.parameters()))`) is reset when the loop's resets, of other optimizers and
modules too (`D_optimizer.zero_grad()`, `G_optimizer.zero_grad()`), together
clear every module it holds; it is flagged when one of them is left out.

A step written by hand is a step too: `w -= lr * w.grad` (also `w.data -= ...`,
`w.data = w.data - ...`, `w[mask] = w[mask] - lr * w.grad[mask]`, `w.sub_(...)`,
`w.data.add_(w.grad, alpha=-lr)`, `w.copy_(...)`), on a tensor or on each tensor of a `for p in
model.parameters():` loop, in the loop's body or a `with torch.no_grad():`
block, after a backward of the body. It is flagged when nothing in the loop
resets or otherwise writes a gradient and the tensor is the same object from
one iteration to the next (not made anew, `x_adv = x_adv.detach()`, nor the
loop's own target), in a file that imports torch or a framework built on it
(fastai, Lightning...): a file of its own autograd, micrograd's `Value`, may
set gradients rather than add to them. An update under an `if`, or one whose
gradient comes from `torch.autograd.grad`, is not read.

The window may be a loop of its own (`for _ in range(grad_accum):` with a
backward per micro-batch, or over the slices or chunks of a batch), its
`optimizer.step()` after it: flagged when a loop of the same function runs
it again and again and resets nothing there.

The loop may be spread over functions of the same file: a `train_step(model,
batch, optimizer)` that backpropagates and steps, called by the loop (the
finding is at its step, and says which loop calls it). A framework's update
function is a loop body too: the process function handed to Ignite's
`Engine(update_fn)`, and Lightning's `training_step` under manual
optimisation (`self.automatic_optimization = False`).

## Why is this bad?

`backward()` adds into `.grad`; it never overwrites it. Without a reset in
the loop, the gradient used by the step on iteration *k* is the sum of the
gradients of all *k* iterations so far: updates grow ever larger and point
at a stale average, and the model silently trains to something else.

## Example

```python
optimizer.zero_grad()
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
```

## Use instead

```python
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
```

## Fix safety

Unsafe. The fix inserts `optimizer.zero_grad()` right after the step (for a
step by hand, `w.grad.zero_()` right after the update), which
is the usual place, but a loop that never reset its gradients does not say
where its author meant the reset to be (before the forward pass, after the
step, at a window boundary). Apply it with `--unsafe-fixes` after reading it.
Lightning's `training_step` under automatic optimisation is not flagged:
Lightning resets for you. Nor are distributed autograd loops
(`dist_autograd.backward(ctx, [loss])` then a `DistributedOptimizer`'s
`step(ctx)`: the gradients live in each iteration's context), the
`step()` of an object the loop hands the loss to backpropagate (a
DeepSpeed engine's `model.backward(loss)` then `model.step()`, which
clears the gradients itself), and an
optimizer built in the iteration over tensors made in that iteration (a
fresh perturbation or latent, `opt = SGD([delta])`), or over the parameters
of a module built in it on every path (`probe = nn.Linear(d, k)`, `head =
MLP(...).to(device)`, `model = build_model(cfg)` with a `build_model` of
this file that returns a new module; also when a function of this file the
loop calls builds both, one or two calls deep): its tensors start with no
gradient. So does a helper's optimizer built on every call over the module
it is handed, when the loop hands it a module built in that iteration
(`model = AutoModel.from_pretrained(path)`, or a method of this file run
earlier in the iteration that sets `self.model` anew on every call) and
calls the helper once per iteration. Called twice on that module in one
iteration (`_backprop(model); _backprop(model)`), with no reset between, it
is flagged: the second call's step applies the first call's gradients again;
the finding names the loop that calls it twice, among all that call the
helper. An optimizer rebuilt every iteration over `model.parameters()` of
a model built before the loop resets nothing, and is flagged; so is one over
a new module that wraps an existing one (`nn.Sequential(backbone, head)`).
"""

from __future__ import annotations

import re
from typing import Iterator, List, Optional, Set

import libcst as cst

from torchlint.context import FileContext
from torchlint.model import ERROR, UNSAFE, Fix
from torchlint.names import ModuleNames, dotted_name, keyword, positional
from torchlint.rules import Example, Finding, Rule
from torchlint.training import ResetSite, StepSite, TrainingLoop, frameworks, roles
from torchlint.training.roles import same_module
from torchlint.walk import preorder

_MANUAL_OPTIMISATION = re.compile(r"automatic_optimization\s*=\s*False")


class MissingZeroGrad(Rule):
    code = "TL002"
    name = "missing-zero-grad"
    severity = ERROR
    summary = "optimizer steps in a training loop that never resets gradients"

    def check(self, context: FileContext) -> Iterator[Finding]:
        for loop in context.loops:
            if not loop.loop_backwards or _lightning_automatic(context, loop):
                continue
            if all(backward.kind == "distributed" for backward in loop.loop_backwards):
                continue  # distributed autograd: the gradients live in the context, one per iteration
            reported = set()
            for step in loop.optimizer_steps:
                optimizer = step.receiver
                if optimizer in reported or _resets_for(loop, optimizer):
                    continue
                if _built_for_this_iteration(loop, step, context.names):
                    continue
                reported.add(optimizer)
                call = f"scaler.step({optimizer})" if step.via_scaler else f"{optimizer}.step()"
                left = loop.modules_left_unreset(optimizer)
                holdings = roles.optimizer_parameters(optimizer, context.names) or ()
                again = max(_calls_on_one_model(loop, other) for other in loop.optimizer_steps
                            if other.via is not None and step.via is not None and other.via.function is step.via.function
                            ) if step.via is not None else 1
                if again > 1 and _built_for_this_iteration(loop, step, context.names, alone=True):
                    # fresh for the first call of the iteration: only the later calls on the same model carry
                    times = "twice" if again == 2 else f"{again} times"
                    later = ("the second call's `backward()` adds to the first call's gradients, so its step applies "
                             "the first call's gradients again" if again == 2 else
                             "each later call's `backward()` adds to the earlier calls' gradients, so its step applies "
                             "theirs again")
                    message = (
                        f"`{call}` runs in `{step.via.name}()`, which builds `{optimizer}` anew on every call over "
                        f"the model it is handed; the loop hands it a model built in the iteration, but calls it "
                        f"{times} on that model and nothing resets the gradients between the calls "
                        f"(`{optimizer}.zero_grad()`): {later}."
                    )
                elif left and left != frozenset().union(*(held.owners for held in holdings)):
                    modules = ", ".join(f"`{module}`" for module in sorted(left))
                    message = (
                        f"`{call}` runs in this loop but no reset in the loop reaches the gradients of {modules}, "
                        f"whose parameters `{optimizer}` also holds (the loop's resets clear only the other "
                        f"modules'): every `backward()` adds to them, so each update applies their running sum "
                        f"since the loop began (`{optimizer}.zero_grad()` resets them all)."
                    )
                else:
                    message = (
                        f"`{call}` runs in this loop but nothing in the loop resets the gradients "
                        f"(`{optimizer}.zero_grad()`): every `backward()` adds to the gradients of all earlier "
                        f"iterations, so each update applies the running sum since the loop began."
                    )
                fix = None
                if step.on_own_line:
                    fix = Fix(
                        UNSAFE,
                        f"Reset gradients with `{optimizer}.zero_grad()` after the step",
                        (context.insert_line_after(step.statement, f"{optimizer}.zero_grad()"),),
                    )
                yield Finding(step.node, message, fix, loop=loop)
            yield from self._inner(context, loop)
            if not loop.optimizer_steps:
                yield from self._by_hand(context, loop)

    def _by_hand(self, context: FileContext, loop: TrainingLoop) -> Iterator[Finding]:
        """A loop that steps by hand (`w -= lr * w.grad`) and resets nothing: the gradient it reads is the running
        sum of every iteration's `backward()`. Only where nothing in the loop touches a gradient otherwise, the
        updated tensor keeps its identity from one iteration to the next, and a backward of the loop's own body
        runs before the update."""
        if not loop.loop_backwards or loop.resets \
                or any(backward.kind not in ("tensor", "autograd") for backward in loop.loop_backwards):
            return
        updates = roles.descent_updates(loop.node.body)
        if not updates or not frameworks.Autograd(context.names).torch:
            return  # not PyTorch's (micrograd's `Value` of the file: its `backward()` may set the gradient)
        update_ids = {id(update.node) for update in updates}
        if _touches_grad_otherwise(loop.node.body, update_ids):
            return
        backward_lines = [context.span(backward.node)[0] for backward in loop.loop_backwards if backward.via is None]
        rebound = _rebound_in(loop.node.body, update_ids)
        own = _names_in(loop.node.target) if isinstance(loop.node, cst.For) else set()
        reported: Set[str] = set()
        for update in updates:
            tensor = update.tensor
            if any(name == tensor or tensor.startswith(name + ".") for name in own):
                continue  # a new tensor on each iteration of the loop itself
            if update.over is not None:
                if tensor not in _names_in(update.over.target) or "." in tensor \
                        or any(name in rebound for name in _names_in(update.over.iter)):
                    continue
                carrier = f"each `{tensor}` of `{context.code(update.over.iter)}`"
            else:
                if any(name == tensor or tensor.startswith(name + ".") for name in rebound):
                    continue
                carrier = f"`{tensor}`"
            line = context.span(update.node)[0]
            if tensor in reported or not any(before < line for before in backward_lines):
                continue
            reported.add(tensor)
            message = (
                f"`{context.code(update.node)}` updates {carrier} from its gradient by hand, but nothing in the loop "
                f"resets `{tensor}.grad` (`{tensor}.grad.zero_()` after the update): every `backward()` adds to it, "
                f"so each update applies the running sum of the gradients since the loop began."
            )
            fix = None
            if update.anchor is not None:
                fix = Fix(UNSAFE, f"Reset the gradient with `{tensor}.grad.zero_()` after the update",
                          (context.insert_line_after(update.anchor, f"{tensor}.grad.zero_()"),))
            yield Finding(update.node, message, fix, loop=loop)

    def _inner(self, context: FileContext, loop: TrainingLoop) -> Iterator[Finding]:
        """A loop that is an accumulation window by itself, run again by a loop of its function that never
        resets the gradients its step applies."""
        window = loop.inner_window
        if window is None or _lightning_automatic(context, loop):
            return
        around = loop.repeated_without_reset(window)
        if around is None:
            return
        step, optimizer = window.step, window.optimizer
        header = f"for {context.code(loop.node.target)} in {context.quote(loop.node.iter)}"
        outer = f"for {context.code(around.target)} in {context.quote(around.iter)}" if isinstance(around, cst.For) \
            else f"while {context.quote(around.test)}"
        message = (
            f"`{context.site_code(step)}` after the micro-batch loop `{header}` runs on every iteration of "
            f"`{outer}`, but nothing there resets the gradients (`{optimizer}.zero_grad()`): each window's "
            f"`backward()` calls add to the gradients of all earlier windows, so each update applies the running "
            f"sum since the loop began."
        )
        fix = None
        if window.step_alone:
            fix = Fix(UNSAFE, f"Reset gradients with `{optimizer}.zero_grad()` after the step",
                      (context.insert_line_after(step.statement, f"{optimizer}.zero_grad()"),))
        yield Finding(step.node, message, fix, loop=loop)

    valid = (
        """
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
""",
        # No step: pure gradient computation (saliency, gradient statistics).
        """
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    grads.append(x.grad)
""",
        # The reset happens in a helper defined in this file.
        """
def clear(model):
    for p in model.parameters():
        p.grad = None

for x, y in loader:
    clear(model)
    criterion(model(x), y).backward()
    optimizer.step()
""",
        # Lightning under automatic optimisation resets for you.
        """
class Model(LightningModule):
    def training_step(self, batch, idx):
        for chunk in batch:
            loss = self.loss(chunk)
            self.manual_backward(loss)
            self.optimizer.step()
""",
        # Model-level reset and `set_to_none=` variants.
        """
for x, y in loader:
    model.zero_grad(set_to_none=True)
    criterion(model(x), y).backward()
    optimizer.step()
""",
        # The GAN optimizers' resets together clear every parameter the information optimizer holds.
        """
import itertools
import torch.optim as optim
optimizer_g = optim.Adam(G.parameters())
optimizer_d = optim.Adam(D.parameters())
optimizer_info = optim.Adam(itertools.chain(G.parameters(), D.parameters()))
for x in loader:
    optimizer_d.zero_grad()
    d_loss(D, G, x).backward()
    optimizer_d.step()
    optimizer_g.zero_grad()
    (g_loss(D, G, x) + info_loss(D, G, x)).backward()
    optimizer_g.step()
    optimizer_info.step()
""",
        # A step by hand that resets the gradient it reads.
        """
import torch
for x, y in loader:
    ((w * x - y) ** 2).mean().backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
    w.grad.zero_()
""",
        # `.step()` on something that is not known to be an optimizer.
        """
for x, y in loader:
    criterion(model(x), y).backward()
    env.step(action)
""",
    )
    invalid = (
        # A step by hand reads a gradient that nothing resets.
        Example(
            """
import torch
for x, y in loader:
    loss = ((w * x - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
""",
            line=7,
            fixed="""
import torch
for x, y in loader:
    loss = ((w * x - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
""",
            unsafe=True,
        ),
        # `netD.zero_grad()` does not reach the generator's parameters.
        Example(
            """
import torch.optim as optim
optimizerD = optim.Adam(netD.parameters())
optimizerG = optim.Adam(netG.parameters())
for real in loader:
    netD.zero_grad()
    errD = criterion(netD(real), ones) + criterion(netD(netG(noise()).detach()), zeros)
    errD.backward()
    optimizerD.step()
    errG = criterion(netD(netG(noise())), ones)
    errG.backward()
    optimizerG.step()
""",
            line=12,
            fixed="""
import torch.optim as optim
optimizerD = optim.Adam(netD.parameters())
optimizerG = optim.Adam(netG.parameters())
for real in loader:
    netD.zero_grad()
    errD = criterion(netD(real), ones) + criterion(netD(netG(noise()).detach()), zeros)
    errD.backward()
    optimizerD.step()
    errG = criterion(netD(netG(noise())), ones)
    errG.backward()
    optimizerG.step()
    optimizerG.zero_grad()
""",
            unsafe=True,
        ),
        Example(
            """
import torch
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
optimizer.zero_grad()
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
""",
            line=8,
            fixed="""
import torch
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
optimizer.zero_grad()
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
""",
            unsafe=True,
        ),
        Example(
            """
from torch.cuda.amp import GradScaler
scaler = GradScaler()
with accelerator.accumulate(model):
    pass
for x, y in loader:
    with autocast():
        loss = model(x, y)
    scaler.scale(loss).backward()
    scaler.step(self.optimizer)
    scaler.update()
""",
            line=10,
            fixed="""
from torch.cuda.amp import GradScaler
scaler = GradScaler()
with accelerator.accumulate(model):
    pass
for x, y in loader:
    with autocast():
        loss = model(x, y)
    scaler.scale(loss).backward()
    scaler.step(self.optimizer)
    self.optimizer.zero_grad()
    scaler.update()
""",
            unsafe=True,
        ),
    )


def _lightning_automatic(context: FileContext, loop) -> bool:
    if loop.function is None or loop.function.name.value != "training_step" or loop.class_def is None:
        return False
    return not _MANUAL_OPTIMISATION.search(context.source_of(loop.class_def))


def _calls_on_one_model(loop: TrainingLoop, step: StepSite) -> int:
    """How many calls of the function that runs `step` (one of this file's) the loop makes in an iteration, on one
    run through it, up to this one: 2 for `_backprop(model); _backprop(model)`; 1 when the step is the loop's own."""
    if step.via is None or step.via.elsewhere is not None:
        return 1
    return 1 + len(_earlier_calls(loop, step))


def _earlier_calls(loop: TrainingLoop, step: StepSite) -> List[StepSite]:
    """The steps that another call of the same function runs before this one in the same iteration, on the model
    this call is handed too (not one built again between them: `model = load(path)` before each call)."""
    via = step.via
    found: List[StepSite] = []
    calls = set()
    for other in loop.optimizer_steps:
        if other.via is None or other.via.function is not via.function or other.via.call is via.call \
                or id(other.via.call) in calls or not loop.precedes(other, step):
            continue
        if _rebuilt_between(loop, other, step):
            continue
        calls.add(id(other.via.call))
        found.append(other)
    return found


def _rebuilt_between(loop: TrainingLoop, earlier: StepSite, later: StepSite) -> bool:
    """The module the later call is handed is a name bound again after the earlier call: no definition of it that
    reaches the later call reaches the earlier one."""
    handed = [argument for parameter, argument in later.via.renames if "." not in argument]
    for name in handed:
        before = {d.index for d in loop.reaching(name, earlier)}
        after = {d.index for d in loop.reaching(name, later)}
        if after and not before & after and all(d.kind == "assign" for d in loop.reaching(name, later)):
            return True
    return False


def _built_for_this_iteration(loop: TrainingLoop, step: StepSite, names: ModuleNames, alone: bool = False) -> bool:
    """On every path to the step, the optimizer is built in this iteration over tensors also made in it,
    so their gradients start empty: a fresh perturbation (`delta = torch.zeros_like(x, requires_grad=True);
    opt = SGD([delta])`), or the parameters of a module built in it (`probe = nn.Linear(d, k);
    opt = SGD(probe.parameters())`). A step that a function of this file runs is read in that function,
    where the optimizer and the module may come from a helper it calls (`head, opt = make_head(d)`). Not
    when any of its tensors could be a model's parameters from before: `SGD(model.parameters())` over a
    model built before the loop, or a new module wrapping one (`nn.Sequential(backbone, head)`)."""
    iteration = roles.ModuleScope(names, loop.flow, loop.functions,
                                  before=lambda name: loop.flow.entering(loop.iteration.region, name),
                                  reaching=lambda name, at: loop.reaching(name, at),
                                  renewed=lambda name, at: _renewed_by_call(loop, name, at))
    if step.via is None:
        scope = iteration
        receiver, at = step.receiver, step.point[0]
    else:
        via = step.via  # read where the step is: in a function of this file, or of another file of the project
        functions = via.elsewhere.functions if via.elsewhere is not None else loop.functions

        # The loop hands the helper a module built for this iteration, and steps it through this call only:
        # a second call of the helper on that module in the same iteration finds the first one's gradients
        # (`alone`: as if this call were the only one).
        alone = alone or not _earlier_calls(loop, step)

        def passed(parameter: str) -> bool:
            argument = via.rename(parameter)
            return alone and argument is not None and roles.builds_new_module(
                cst.parse_expression(argument), step.point[0], iteration)

        scope = roles.ModuleScope(via.names(names), via.flow, functions, passed=passed)
        scaled = positional(via.site, 0) if step.via_scaler else None
        receiver = dotted_name(scaled) if scaled is not None else dotted_name(getattr(via.site.func, "value", None))
        at = via.node
    definitions = scope.reaching(receiver, at) if receiver else []
    return bool(definitions) and all(_fresh_optimizer(d, scope) for d in definitions)


def _renewed_by_call(loop: TrainingLoop, name: str, at: int) -> bool:
    """A method of this file that the iteration runs before `at` replaces `self.<x>` on every call
    (`self._create_model(...)` setting `self.model = AutoModel.from_pretrained(path)`): what `name` holds at
    `at` is that call's, not the module from before the loop."""
    if not name.startswith("self.") or loop.functions is None:
        return False
    for call in loop.calls:
        func = call.node.func if isinstance(call.node, cst.Call) else None
        if not (isinstance(func, cst.Attribute) and dotted_name(func.value) == "self") or call.depth:
            continue
        method = loop.functions.callee(call.node, loop.function)
        if method is not None and loop.dominates(call, at) and loop.functions.flow(method).replaces(name):
            return True
    return False


def _fresh_optimizer(definition, scope: roles.ModuleScope) -> bool:
    if definition.kind != "assign":
        return False
    if definition.unpacked:  # `head, optimizer = make_head(dim)`
        return roles.returned_slot(definition, scope, _builds_fresh_optimizer)
    return _builds_fresh_optimizer(definition.value, definition.node, scope)


def _builds_fresh_optimizer(value: Optional[cst.BaseExpression], at: int, scope: roles.ModuleScope) -> bool:
    if isinstance(value, (cst.Name, cst.Attribute)):
        definitions = scope.reaching(dotted_name(value) or "", at)
        return bool(definitions) and all(_fresh_optimizer(d, scope) for d in definitions)
    if not isinstance(value, cst.Call):
        return False
    params = positional(value, 0) or keyword(value, "params")
    return params is not None and _fresh_tensors(scope, params, at)


def _fresh_tensors(scope: roles.ModuleScope, params: cst.BaseExpression, at: int, depth: int = 0) -> bool:
    """Every tensor `params` names (`[delta]`, `[{"params": [z]}]`, `probe.parameters()`, a name bound to
    such a list) is made in this iteration, on every path: a tensor from a torch function, or a parameter
    of a module built there (`roles.builds_new_module`); not a parameter of any other (`model.parameters()`,
    `named_parameters()`, `param_groups`)."""
    if depth > 8:
        return False
    if isinstance(params, (cst.List, cst.Tuple)):
        return bool(params.elements) and all(_fresh_tensors(scope, e.value, at, depth + 1) for e in params.elements)
    if isinstance(params, cst.Call):  # `[torch.zeros(8).requires_grad_()]`, not `model.parameters()`
        func = params.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("parameters", "named_parameters"):
            return roles.builds_new_module(func.value, at, scope)  # `probe.parameters()`
        if (dotted_name(func) or "") in ("list", "tuple", "itertools.chain", "chain") and params.args:
            return all(_fresh_tensors(scope, arg.value, at, depth + 1) for arg in params.args)
        if isinstance(func, cst.Attribute) and func.attr.value == "values" and not params.args:
            return _fresh_tensors(scope, func.value, at, depth + 1)  # `trainable.values()`
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call):
            return _fresh_tensors(scope, func.value, at, depth + 1)
        return (scope.names.qualify(func) or "").startswith("torch.") and not _holds_parameters(params)
    if isinstance(params, cst.BinaryOperation) and isinstance(params.operator, cst.Add):  # `[z] + noise`
        return _fresh_tensors(scope, params.left, at, depth + 1) and _fresh_tensors(scope, params.right, at, depth + 1)
    if isinstance(params, _COMPREHENSIONS):  # `{n: p for n, p in probe.named_parameters() if p.requires_grad}`
        source = _drawn_from(params)
        return source is not None and _fresh_tensors(scope, source, at, depth + 1)
    if isinstance(params, cst.Dict):
        groups = [e.value for e in params.elements
                  if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
                  and e.key.evaluated_value == "params"]
        return len(groups) == 1 and _fresh_tensors(scope, groups[0], at, depth + 1)
    name = dotted_name(params)
    if name is None:
        return False
    definitions = scope.reaching(name, at)
    if not definitions:
        return False
    for definition in definitions:
        value = definition.value
        if definition.kind != "assign" or definition.unpacked or value is None:
            return False
        if _holds_parameters(value) or isinstance(value, (cst.List, cst.Tuple, cst.BinaryOperation,
                                                          *_COMPREHENSIONS)):
            if not _fresh_tensors(scope, value, definition.node, depth + 1):
                return False
        elif not isinstance(value, cst.Call):
            return False  # `model.fc.weight`: a parameter, not a tensor made here
    return True


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


def _drawn_from(comprehension) -> Optional[cst.BaseExpression]:
    """What a comprehension's every element is taken from, as it is: `probe.parameters()` of `[p for p in
    probe.parameters() if p.requires_grad]` or of `{n: p for n, p in probe.named_parameters()}` (the dict's
    values). None for an element computed from it (`p * 2`) or drawn over several `for` clauses."""
    clause = comprehension.for_in
    if clause.inner_for_in is not None:
        return None
    element = comprehension.value if isinstance(comprehension, cst.DictComp) else comprehension.elt
    if not isinstance(element, cst.Name):
        return None
    target = clause.target
    bound = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
    if not any(isinstance(name, cst.Name) and name.value == element.value for name in bound):
        return None
    return clause.iter


def _holds_parameters(value: cst.BaseExpression) -> bool:
    """`list(model.parameters())`, `[p for g in opt.param_groups for p in g["params"]]`."""
    return any(isinstance(node, cst.Attribute) and node.attr.value in ("parameters", "named_parameters",
                                                                        "param_groups")
               for node in preorder(value))


def _resets_for(loop: TrainingLoop, optimizer: str) -> List[ResetSite]:
    """Resets that may clear `optimizer`'s gradients: a reset whose reach cannot be read counts.

    `netD.zero_grad()` does not reach `optimizerG = Adam(netG.parameters())`;
    `model.zero_grad()`, `p.grad = None` or a helper reach any optimizer whose
    parameters cannot be traced. Where the optimizer's construction shows every
    module it holds, the resets of other optimizers and modules count when
    together they clear all of them (`loop.modules_left_unreset`).
    """
    models = dict(loop.optimizer_models).get(optimizer, frozenset())
    left = loop.modules_left_unreset(optimizer)
    found = []
    for reset in loop.resets:
        if reset.kind not in ("zero_grad", "assigned") or reset.target == optimizer \
                or (reset.kind == "assigned" and not reset.target):
            found.append(reset)  # gradients replaced (`p.grad = g`) over a model's parameters: as its zero_grad()
        elif left is not None:
            if not left:
                found.append(reset)  # with the others, it clears every module the optimizer holds
        elif reset.target not in loop.optimizer_names and (
                not models or any(same_module(reset.target, model) for model in models)):
            found.append(reset)
    return found


def _touches_grad_otherwise(body: cst.BaseSuite, updates: Set[int]) -> bool:
    """Something in the loop other than the updates writes a gradient or calls an in-place method on one
    (`p.grad[mask] = 0`, `p.grad.mul_(0)`, `p.grad.copy_(g)`), or calls a `zero_grad`: not read here."""
    for node in preorder(body):
        if id(node) in updates:
            continue
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            if any(isinstance(part, cst.Attribute) and part.attr.value == "grad"
                   for target in targets for part in preorder(target)):
                return True
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            method = node.func.attr.value
            if method == "zero_grad" or method.endswith("_") and any(
                    isinstance(part, cst.Attribute) and part.attr.value == "grad"
                    for part in preorder(node.func.value)):
                return True
    return False


def _rebound_in(body: cst.BaseSuite, updates: Set[int]) -> Set[str]:
    """The names the loop's body gives a value (assignments, `for` and `with ... as` targets, `:=`), dotted
    (`self.w`), the augmented ones too but for the updates themselves."""
    bound: Set[str] = set()
    for node in preorder(body):
        targets: List[cst.CSTNode] = []
        if id(node) in updates:
            continue
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr)):
            targets = [node.target]
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            targets = [node.asname.name]
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            bound.add(node.name.value)
        for target in targets:
            for part in preorder(target):
                name = dotted_name(part) if isinstance(part, (cst.Name, cst.Attribute)) else None
                if name is not None:
                    bound.add(name)
    return bound


def _names_in(node: cst.CSTNode) -> Set[str]:
    """The names and dotted names `node` spells (`model`, `model.parameters` in `model.parameters()`)."""
    return {dotted_name(part) for part in preorder(node) if isinstance(part, (cst.Name, cst.Attribute))} - {None}
