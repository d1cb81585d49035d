"""TL016 ddp-accumulation-without-no-sync: a DDP model all-reduces its gradients on every micro-batch.

## What it does

Flags the forward call of a `DistributedDataParallel` model (`DDP(model)`,
`torch.nn.parallel.DistributedDataParallel(...)`, resolved through the
file's imports and through the names the wrapped model is copied to; a
call of a factory of the project, in this file or another, every `return`
of which hands back a DDP wrap (`model = smart_DDP(model)`); a
model the loop's function receives as a parameter when every call of that
function in the project, in this file or another, passes a model wrapped
in DDP) in a gradient-accumulation loop (the optimizer's step guarded by `(i + 1) % N == 0`
or a micro-batch counter) when it runs on the micro-batches that do not step
outside `model.no_sync()`, including the case where `no_sync()` wraps only
the backward. A model wrapped only under a user option (`if
args.distributed: model = DDP(model)`) is flagged too, and the finding
says when: the all-reduces are paid by whoever turns the option on. The
window may be a loop of its own: `for _ in
range(grad_accum):` (or over the slices or chunks of a batch) with a
backward per micro-batch and one `optimizer.step()` after the loop, the
forward on every iteration outside `no_sync()`. The forward may run in a
function the loop calls with the model, of this file or another file of
the project (`loss, output = train_class_batch(model, samples, targets,
criterion)`, whose body runs `outputs = model(samples)` on every call, in
a `with` of `autocast` at most, or in each branch of an `if` that has an
`else`): the finding is on that call. In a loop that is a window of its
own, the forward may also be split over the branches of an `if`/`else`
(`if amp: logits = model(x)` / `else: logits = model(x.float())`): every
micro-batch runs one of them. A forward under an `if` without an `else`, or
in one branch only, is not flagged there.

## Why is this bad?

DDP decides in the *forward* whether the next backward all-reduces: a forward
outside `no_sync()` arms the reducer, and the backward then averages every
gradient bucket across the processes. Without `no_sync()` on the micro-batches
that do not step, each of them pays a full all-reduce that the next one
overwrites with a new sum: `N`× the communication one all-reduce per window
needs, for the same result. Measured with a counting communication hook on
two gloo processes (10 micro-batches, `N = 4`): 10 all-reduces without
`no_sync()`, 10 with `no_sync()` around the backward only, 3 with `no_sync()`
around the forward and backward, and 3 with it around the forward only
(the backward outside it does not all-reduce). So `no_sync()` around the
backward alone is the bug; around the forward alone it works.

## Example

```python
model = DDP(model, device_ids=[rank])
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / accum_steps
    loss.backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
```

## Use instead

```python
model = DDP(model, device_ids=[rank])
for i, (x, y) in enumerate(loader):
    boundary = (i + 1) % accum_steps == 0
    with contextlib.nullcontext() if boundary else model.no_sync():
        loss = criterion(model(x), y) / accum_steps
        loss.backward()
    if boundary:
        optimizer.step()
        optimizer.zero_grad()
```

Not flagged: a forward under `model.no_sync()` on the micro-batches that do
not step (`with model.no_sync() if not boundary else nullcontext():`, a
context manager bound to a name first, `ctx = model.no_sync if ... else
nullcontext`; in an inner loop, `model.no_sync() if micro < n - 1 else
nullcontext()`, or the whole loop under `no_sync()` with the last micro-batch
after it), `model.require_backward_grad_sync = boundary`, a forward under
a context manager torchlint cannot read (it may switch the synchronisation),
Accelerate's `accelerator.accumulate(model)` / `accelerator.no_sync(model)`,
DeepSpeed engines, FSDP, Lightning, forwards under `torch.no_grad()`,
forwards of the wrapped module itself (`model.module(x)`, or `model.module`
handed to the loop's function), a forward on the branch where the loop
hands the model the loss to backpropagate (`model.backward(loss)`: a
DeepSpeed engine, no DDP module), a function the loop calls that may
return before the forward, rebinds the model or switches synchronisation
itself (`with model.no_sync():` inside it), a parameter that some call passes an
unwrapped model for (a call that leaves an accumulation count defaulting to
`1` out accumulates nothing and does not count), a function also handed on
as a value, and loops that step on every micro-batch.

## Fix safety

No fix: wrapping the forward and backward in `model.no_sync()` on the
micro-batches that do not step needs the window's condition as an
expression before the forward, which the loop usually computes only after
the backward; the finding says what to write.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from torchlint.context import FileContext
from torchlint.flow.cfg import block_of
from torchlint.model import WARNING
from torchlint.names import ModuleNames, dotted_name, int_value, last_component, positional
from torchlint.rules import Example, Finding, Rule
from torchlint.training import AccumulationCheck, CallSite, Site, StepSite, TrainingLoop
from torchlint.training.calls import passed_names, returns_only_at_end
from torchlint.training.timeline import listing
from torchlint.training.wrapping import DdpWrap, ddp_wrap
from torchlint.walk import calls_in, preorder
# Methods that switch gradient synchronisation: `no_sync`, FSDP2's `set_requires_gradient_sync`,
# DeepSpeed's `disable_allreduce`, Accelerate's `accumulate`.
_SYNC_SWITCH = re.compile(r"no_sync|_sync$|^sync_|allreduce$|^accumulate$")
# Context managers that leave synchronisation alone.
_NEUTRAL_CONTEXTS = frozenset({
    "autocast", "nullcontext", "enable_grad", "set_grad_enabled", "record_function", "profile", "sdp_kernel",
    "sdpa_kernel", "detect_anomaly", "set_detect_anomaly", "device", "stream",
})


class DdpAccumulationWithoutNoSync(Rule):
    code = "TL016"
    name = "ddp-accumulation-without-no-sync"
    severity = WARNING
    summary = "DDP model all-reduces on every micro-batch: no `no_sync()` around the forward of non-stepping ones"

    def check(self, context: FileContext) -> Iterator[Finding]:
        for loop in context.loops:
            if _switches_sync(loop):
                continue
            yield from self._inner(context, loop)
            window = _window(loop)
            if window is None:
                continue
            step, check = window
            reported: Set[str] = set()
            for call in loop.calls:
                model = _model_of(call)
                if call.depth or model is None or model in reported:
                    continue
                if loop.once_per_window(call, check) or loop.grad_disabled_at(call, context.names) is not None:
                    continue
                kinds = [_context_kind(item, loop, call, context.names) for item in loop.outer_contexts + call.contexts]
                if any(kind != "neutral" for kind in kinds):
                    continue
                wrap = ddp_wrap(loop, model, call, context.names)
                forward = None
                if wrap is None:  # a function the loop calls with the model, which runs its forward
                    model, forward = _helper_forward(loop, call)
                    wrap = ddp_wrap(loop, model, call, context.names) if model is not None and model not in reported \
                        else None
                if wrap is None or _driven_as_engine(context, loop, model, call):
                    continue
                reported.add(model)
                yield Finding(call.node, self._message(context, loop, call, model, wrap, step, check, forward),
                              timeline=_timeline(loop, step, check))

    def _inner(self, context: FileContext, loop: TrainingLoop) -> Iterator[Finding]:
        """The forward of a DDP model on every iteration of a loop that is an accumulation window by itself
        (`TrainingLoop.inner_window`): the step runs once, after the loop. The forward is the model's call, or a
        call of a function that runs it (`_helper_forward`); under an `if`, when every pass runs one of them (a
        forward in each branch)."""
        window = loop.inner_window
        if window is None:
            return
        header = f"for {context.code(loop.node.target)} in {context.quote(loop.node.iter)}"
        forwards: Dict[str, List[Tuple[CallSite, Optional[cst.Call], DdpWrap]]] = {}
        for call in loop.calls:
            model = _model_of(call)
            if call.depth or model is None:
                continue
            if loop.grad_disabled_at(call, context.names) is not None:
                continue
            kinds = [_context_kind(item, loop, call, context.names) for item in loop.outer_contexts + call.contexts]
            if any(kind != "neutral" for kind in kinds):
                continue
            wrap, forward = ddp_wrap(loop, model, call, context.names), None
            if wrap is None:  # a function the loop calls with the model, which runs its forward
                model, forward = _helper_forward(loop, call)
                wrap = ddp_wrap(loop, model, call, context.names) if model is not None else None
            if wrap is not None:
                forwards.setdefault(model, []).append((call, forward, wrap))
        for model, found in forwards.items():
            unguarded = [each for each in found if not each[0].guards]
            if unguarded:
                call, forward, wrap = unguarded[0]
            elif loop.on_every_pass([each[0] for each in found]):
                call, forward, wrap = found[0]
            else:
                continue
            runs = "runs on every micro-batch" if forward is None else \
                f"runs the forward `{context.quote(forward)}` on every micro-batch"
            head = (f"{_is_ddp_model(context, model, wrap)} and `{context.quote(call.node)}` {runs} of "
                    f"`{header}`, but `{context.code(window.step.node)}` only once, after the loop")
            yield Finding(call.node, _message(context, loop, model, head, window.count.describe(context.code),
                                              _last_one(context, loop, model, window)))

    @staticmethod
    def _message(context: FileContext, loop: TrainingLoop, call: CallSite, model: str, wrap: DdpWrap,
                 step: StepSite, check: AccumulationCheck, forward: Optional[cst.Call] = None) -> str:
        count = context.code(check.count)
        condition = f"`{context.quote(check.guard.test)}`" + (" is false" if check.guard.negated else "")
        runs = "runs on every micro-batch" if forward is None else \
            f"runs the forward `{context.quote(forward)}` on every micro-batch"
        head = (f"{_is_ddp_model(context, model, wrap)} and `{context.quote(call.node)}` {runs}, "
                f"but `{context.site_code(step)}` only when {condition}")
        return _message(context, loop, model, head, f"`{count}`")

    valid = (
        # `no_sync()` around forward and backward, except at the window's end.
        """
import contextlib
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(net)
for i, (x, y) in enumerate(loader):
    boundary = (i + 1) % accum == 0
    with model.no_sync() if not boundary else contextlib.nullcontext():
        loss = criterion(model(x), y) / accum
        loss.backward()
    if boundary:
        optimizer.step()
        optimizer.zero_grad()
""",
        # The flag `no_sync()` sets, set by hand.
        """
import torch
model = torch.nn.parallel.DistributedDataParallel(net)
for step, batch in enumerate(loader):
    model.require_backward_grad_sync = (step + 1) % accum == 0
    loss = model(**batch).loss / accum
    loss.backward()
    if (step + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        # A context manager chosen before the forward.
        """
from contextlib import nullcontext
from torch.nn.parallel import DistributedDataParallel
model = DistributedDataParallel(net)
for i, (x, y) in enumerate(loader):
    sync = (i + 1) % accum == 0
    ctx = nullcontext if sync else model.no_sync
    with ctx():
        (criterion(model(x), y) / accum).backward()
    if sync:
        optimizer.step()
        optimizer.zero_grad()
""",
        # Not wrapped in DDP.
        """
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / accum).backward()
    if (i + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
    )
    invalid = (
        Example(
            """
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(net, device_ids=[rank])
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / accum_steps
    loss.backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            line=5,
        ),
        # `no_sync()` around the backward only: the forward already armed the all-reduce.
        Example(
            """
import torch
model = torch.nn.parallel.DistributedDataParallel(net)
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / accum
    if (i + 1) % accum != 0:
        with model.no_sync():
            loss.backward()
    else:
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
            line=5,
        ),
    )


def _message(context: FileContext, loop: TrainingLoop, model: str, head: str, count: str,
             last: Optional[str] = None) -> str:
    """What the all-reduce on every micro-batch costs (`head` says where the forward and the step run). `last`:
    for a window that is a loop of its own, how to leave its last micro-batch out of `no_sync()`."""
    around_backward = [item for backward in loop.loop_backwards for item in backward.contexts
                       if _context_kind(item, loop, backward, context.names) == "sync"]
    if around_backward:
        advice = "Put the forward inside it too." if last is None else (
            f"Put the forward inside it too, on every micro-batch but the last ({last}): the last one's "
            f"backward then all-reduces the window's sum once.")
        return (f"{head}: `with {context.code(around_backward[0])}:` wraps only the backward, but DDP decides in "
                f"the forward whether the backward all-reduces, so every micro-batch still all-reduces the "
                f"gradients: {count}× the communication the window needs. {advice}")
    which = "the micro-batches that do not step" if last is None else f"every micro-batch but the last ({last})"
    return (f"{head}: without `{model}.no_sync()` around the forward and backward of {which}, every backward "
            f"all-reduces the gradients across processes: {count}× the communication the window needs, for the "
            f"same result.")


def _last_one(context: FileContext, loop: TrainingLoop, model: str, window) -> str:
    """How an inner loop leaves its last micro-batch out of `no_sync()`: `with model.no_sync() if micro < n - 1
    else nullcontext():` for a loop that counts `range(n)` (naming a counter where it has none)."""
    if window.count.kind != "counted":
        return f"the last {'slice' if window.count.kind == 'slices' else 'chunk'}'s forward and backward outside it"
    target, iterable = loop.node.target, loop.node.iter
    count = context.code(window.count.count)
    first = positional(iterable, 0) if len(iterable.args) == 2 else None
    last = f"{count} - 1" if first is None or int_value(first) == 0 else count
    if isinstance(target, cst.Name) and target.value != "_":
        return f"`with {model}.no_sync() if {target.value} < {last} else nullcontext():`"
    return f"`for micro in {context.code(iterable)}:` and `with {model}.no_sync() if micro < {last} else nullcontext():`"

def _window(loop: TrainingLoop) -> Optional[tuple]:
    """The first optimizer step of the loop that waits for an accumulation window, with its condition."""
    for step in loop.optimizer_steps:
        check = loop.accumulation_check(step) if step.depth == 0 else None
        if check is not None:
            return step, check
    return None


def _switches_sync(loop: TrainingLoop) -> bool:
    """The loop sets the synchronisation by hand somewhere: `model.require_backward_grad_sync = ...`, or a
    call like `model.set_requires_gradient_sync(...)` / `engine.disable_allreduce()` outside a `with`."""
    if any(last_component(assignment.target) == "require_backward_grad_sync" for assignment in loop.assignments):
        return True
    items = {id(node) for site in loop.calls + loop.backwards for item in site.contexts for node in preorder(item)}
    return any(call.callee is not None and id(call.node) not in items
               and _SYNC_SWITCH.search(last_component(call.callee)) for call in loop.calls)


def _driven_as_engine(context: FileContext, loop: TrainingLoop, model: str, call: CallSite) -> bool:
    """The loop hands `model` a loss to backpropagate (`model.backward(loss)`, a DeepSpeed engine's), always or
    under a test that `call` runs under too and that nothing in the loop changes: on those runs it is no DDP
    module, which has no `backward` (`if loss_scaler is None:` runs the engine's forward, backward and step; the
    `else:` the DDP model's)."""
    assigned = {assignment.target for assignment in loop.assignments}
    around = {(context.code(guard.test), guard.negated) for guard in call.guards}
    for backward in loop.backwards:
        if backward.loss_taker != model:
            continue
        if not backward.guards:
            return True
        for guard in backward.guards:
            read = {name.value for name in preorder(guard.test) if isinstance(name, cst.Name)}
            if (context.code(guard.test), guard.negated) in around and read and not read & assigned:
                return True
    return False


def _helper_forward(loop: TrainingLoop, call: CallSite) -> Tuple[Optional[str], Optional[cst.Call]]:
    """(the loop's model, the forward) when `call` runs a function, of this file or another of the project, that
    calls the parameter the loop passes that model for on every call (`loss, output = train_class_batch(model,
    samples, targets, criterion)`, whose body runs `outputs = model(samples)`), outside any context manager but
    those that leave synchronisation alone; (None, None) otherwise. A function that may return early, rebinds
    the parameter, or switches synchronisation itself is not followed."""
    found = loop.called_function(call.node)
    if found is None:
        return None, None
    function, functions = found
    if not returns_only_at_end(function) or _switches_sync_in(function):
        return None, None
    passed = dict(passed_names(call.node, function))
    for parameter, forward in _parameter_forwards(function, set(passed)).items():
        if not functions.rebinds(function, parameter):
            return passed[parameter], forward
    return None, None


def _parameter_forwards(function: cst.FunctionDef, parameters: Set[str]) -> dict:
    """parameter -> its first call (`model(x)`, `model.forward(x)`) in a statement of `function` that runs on every
    call, in its body or in a `with` of neutral context managers (`autocast`), or in each branch of an `if` that
    has an `else` (`if cached: model(x, feats) else: model(x)`)."""
    return _block_forwards(list(block_of(function)), parameters)


def _block_forwards(statements: Sequence[cst.CSTNode], parameters: Set[str]) -> dict:
    found: dict = {}
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            for inner in calls_in(statement):
                name = dotted_name(inner.func)
                name = name[: -len(".forward")] if name is not None and name.endswith(".forward") else name
                if name in parameters and name not in found:
                    found[name] = inner
        elif isinstance(statement, cst.With) and all(_neutral_item(item) for item in statement.items):
            for name, inner in _block_forwards(list(block_of(statement)), parameters).items():
                found.setdefault(name, inner)
        elif isinstance(statement, cst.If) and statement.orelse is not None:
            other = statement.orelse
            elsewhere = _block_forwards([other] if isinstance(other, cst.If) else list(block_of(other)), parameters)
            for name, inner in _block_forwards(list(block_of(statement)), parameters).items():
                if name in elsewhere:
                    found.setdefault(name, inner)
    return found


def _neutral_item(item: cst.WithItem) -> bool:
    value = item.item
    callee = dotted_name(value.func) if isinstance(value, cst.Call) else None
    return callee is not None and last_component(callee) in _NEUTRAL_CONTEXTS


def _switches_sync_in(function: cst.FunctionDef) -> bool:
    """The function calls a method that switches synchronisation (`no_sync`), or sets DDP's flag by hand."""
    for node in preorder(function):
        if isinstance(node, cst.Call):
            callee = dotted_name(node.func)
            if callee is not None and _SYNC_SWITCH.search(last_component(callee)):
                return True
        elif isinstance(node, cst.Attribute) and node.attr.value == "require_backward_grad_sync":
            return True
    return False


def _model_of(call: CallSite) -> Optional[str]:
    """The model a call runs forward: `model` for `model(x)` and for `model.forward(x)`."""
    callee = call.callee
    if callee is not None and callee.endswith(".forward"):
        return callee[: -len(".forward")]
    return callee


def _is_ddp_model(context: FileContext, model: str, wrap: DdpWrap) -> str:
    """`model` is a DDP model, and where and when it was wrapped when that is not in plain sight before the loop:
    "`model` is wrapped in `DistributedDataParallel` by `train_worker()` (line 1639) when `is_distributed` is
    set"."""
    if wrap.line is None and wrap.condition is None and wrap.factory is None:
        return f"`{model}` is a `DistributedDataParallel` model"
    where = ""
    if wrap.path is not None:
        folder = os.path.dirname(os.path.abspath(context.path))
        where = f" ({Path(os.path.relpath(wrap.path, folder)).as_posix()}:{wrap.line})"
    elif wrap.line is not None:
        where = f" (line {wrap.line})"
    elif wrap.node is not None:
        through = f", with `{wrap.factory}()`" if wrap.factory is not None else ""
        where = f" (line {context.span(wrap.node)[0]}{through})"
    by = f" by `{wrap.scope}()`" if wrap.scope else ""
    when = ""
    if wrap.condition is not None:
        plain = re.fullmatch(r"[A-Za-z_][\w.]*(\[[^\]]*\])?", wrap.condition) is not None
        when = f" when `{wrap.condition}` {'is set' if plain else 'holds'},"
    return f"`{model}` is wrapped in `DistributedDataParallel`{by}{where}{when}"


def _context_kind(item: cst.BaseExpression, loop: TrainingLoop, site: Site, names: ModuleNames,
                  depth: int = 0) -> str:
    """"sync" for a context that switches gradient synchronisation (`model.no_sync()`,
    `accelerator.accumulate(model)`, `ctx()` bound to one), "neutral" for one known to leave it alone
    (`torch.autocast(...)`, `nullcontext()`, `ctx` bound to either), "unknown" otherwise."""
    for node in preorder(item):
        if isinstance(node, (cst.Name, cst.Attribute)):
            word = node.value if isinstance(node, cst.Name) else node.attr.value
            if _SYNC_SWITCH.search(word):
                return "sync"
    if isinstance(item, cst.IfExp):
        return _combined([_context_kind(part, loop, site, names, depth) for part in (item.body, item.orelse)])
    producer = dotted_name(item.func if isinstance(item, cst.Call) else item)
    if producer is None or depth > 3:
        return "unknown"
    if last_component(producer) in _NEUTRAL_CONTEXTS:
        return "neutral"
    imported = names.imported(producer) if names.project is not None else None
    origin = names.project.reexported(*imported) if imported is not None else None
    if origin is not None and last_component(origin) in _NEUTRAL_CONTEXTS:
        return "neutral"  # `smart_amp_autocast`: a file of the project imports `autocast` again under that name
    values = [value for value in loop.values_at(producer, site) if value is not None] or names.values_of(producer)
    if not values:
        return "unknown"
    return _combined([_context_kind(value, loop, site, names, depth + 1) for value in values])


def _combined(kinds: List[str]) -> str:
    if "sync" in kinds:
        return "sync"
    return "neutral" if kinds and all(kind == "neutral" for kind in kinds) else "unknown"


def _timeline(loop: TrainingLoop, step: StepSite, check: AccumulationCheck) -> Optional[str]:
    """After which micro-batches the gradients are all-reduced, and after which they need to be."""
    run = loop.run_of(step, check)
    if run is None:
        return None
    return (f"{run.header()}: the gradients are all-reduced after every micro-batch ({run.length} times), the "
            f"optimizer steps after micro-batches {listing(run.steps)} ({len(run.steps)} times)\n"
            f"expected: all-reduces after micro-batches {listing(run.steps)} only ({len(run.steps)} times)")
