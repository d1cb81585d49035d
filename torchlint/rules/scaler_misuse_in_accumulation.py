"""TL014 scaler-misuse-in-accumulation: unscaling, clipping or `scaler.update()` on every micro-batch,
or clipping gradients that are still scaled.

## What it does

Flags, in a gradient-accumulation loop (the optimizer's step guarded by
`(i + 1) % N == 0` or a micro-batch counter), a `scaler.unscale_(optimizer)`,
a gradient clip (`torch.nn.utils.clip_grad_norm_`, `clip_grad_value_`,
`accelerator.clip_grad_norm_`, a gradient-clipper object of the file) or a
`scaler.update()` that runs on every micro-batch while the step runs once
per window, also when the window is a loop of its own (`for _ in
range(grad_accum):` over micro-batches, or the slices or chunks of a batch,
with one `scaler.step(optimizer)` after the loop) and the statement runs in
that loop. Also flags, in any training loop whose backward goes through a
`GradScaler` (`scaler.scale(loss).backward()`), a
`torch.nn.utils.clip_grad_norm_`/`clip_grad_value_` before `scaler.step`
with no `scaler.unscale_(optimizer)` before it.

The step's window may be a number of smaller windows: `glb_step += 1` where
`actual_step % N == 0` holds, and the step under a further `if glb_step % F
== 0:` (OpenPrompt's tutorials) steps every `N * F` micro-batches; a clip in
the outer branch runs every `N` of them and is flagged, its fix moving it
next to the step (before a further condition of the step's own, `if
optimizer1 is not None:`, so it still runs for the other optimizers).

## Why is this bad?

`scaler.unscale_(optimizer)` may run once between two `scaler.update()`
calls: on the second micro-batch of a window it raises "unscale_() has
already been called on this optimizer since the last update()". A
`scaler.update()` on a micro-batch where nothing stepped fails with "No inf
checks were recorded prior to update." (and, next to a per-micro-batch
`unscale_`, divides the gradients already in `.grad` by the scale again on
every micro-batch). Clipping after every micro-batch clips partial sums of
the window: whenever one exceeds the threshold, the micro-batches before it
are scaled down and the step does not apply the clipped window gradient.
Clipping gradients that are still multiplied by the loss scale compares the
threshold with a norm thousands of times too large: the gradients are cut to
`max_norm` *before* `scaler.step` divides them by the scale, so each update
ends up tiny.

## Example

```python
for i, (x, y) in enumerate(loader):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y) / accum_steps
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    if (i + 1) % accum_steps == 0:
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
```

## Use instead

```python
for i, (x, y) in enumerate(loader):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y) / accum_steps
    scaler.scale(loss).backward()
    if (i + 1) % accum_steps == 0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
```

Not flagged: unscaling and clipping inside the step's branch, or under their
own condition on the same window (also a flag assigned from it, `sync =
(i + 1) % n == 0`, Accelerate's `accelerator.sync_gradients` and DeepSpeed's
`is_gradient_accumulation_boundary()`); clipping every iteration when
the optimizer steps every iteration; clipping without a `GradScaler`
(float32, bf16 autocast) or after a `scaler.unscale_` that may run before
it (`if use_amp: scaler.unscale_(optimizer)`); a `GradScaler(enabled=False)`;
Accelerate's `accelerator.clip_grad_norm_`, which unscales itself. The
`scaler.step(optimizer)` is the step itself, never reported here.

## Fix safety

Safe where the code settles it: a statement that runs on every micro-batch
is moved into the step's branch, right before the step (`scaler.unscale_`
before the branch's first clip; `scaler.update()` right after the step), when
it is alone on its line, sits under no condition or `with` of its own and
reads nothing the loop assigns again before the step. Moving an assignment
(`norm = clip_grad_norm_(...)`) is unsafe: the value is then computed only at
the window's end. A missing `scaler.unscale_(optimizer)` is inserted right
before the clip, with the scaler and optimizer of the `scaler.step(...)`
that follows it. The runnable fixtures (`fixtures/TL014/`) show the fixed
scripts train exactly like the reference.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Iterator, List, Optional, Set, Tuple

import libcst as cst

from torchlint.context import FileContext
from torchlint.model import ERROR, SAFE, UNSAFE, Fix
from torchlint.names import dotted_name, iter_names, keyword, last_component, positional
from torchlint.rules import Example, Finding, Rule
from torchlint.training import AccumulationCheck, Site, StepSite, TrainingLoop, roles
from torchlint.training.timeline import listing
from torchlint.training.windows import InnerWindow, checks_in
from torchlint.walk import calls_in, preorder

# Clips that read `.grad` as it is: after `scaler.scale(loss).backward()` they need `scaler.unscale_` first.
_TORCH_CLIPS = frozenset({
    "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_value_", "torch.nn.utils.clip_grad_norm",
    "torch.nn.utils.clip_grad.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_value_",
    "torch.nn.utils.clip_grad.clip_grad_norm",
})
_CLIP_CALL = re.compile(r"^clip_grad")  # clip_grad_norm_, clip_grad_value_, clip_gradients, clip_grads...
_CLIPPER_CLASS = re.compile(r"grad\w*clip|clip\w*grad", re.IGNORECASE)  # `GradientClipper(max_grad_norm=1.0)`
_BOUNDARY_FLAGS = frozenset({"sync_gradients", "is_gradient_accumulation_boundary"})


@dataclass(frozen=True)
class _Work:
    """Something that must happen once per window, right before the step: `kind` is unscale | update | clip."""

    site: Site
    kind: str
    raw_clip: bool = False  # a torch clip of `.grad` as it is
    receiver: str = ""  # the scaler of `scaler.unscale_(...)` / `scaler.update()`
    argument: Optional[cst.BaseExpression] = None  # the optimizer handed to `unscale_`


class ScalerMisuseInAccumulation(Rule):
    code = "TL014"
    name = "scaler-misuse-in-accumulation"
    severity = ERROR
    summary = "`scaler.unscale_`, clipping or `scaler.update()` on every micro-batch, or clipping scaled gradients"

    def check(self, context: FileContext) -> Iterator[Finding]:
        for loop in context.loops:
            works = _works(context, loop)
            if not works:
                continue
            reported: Set[int] = set()
            for step in loop.optimizer_steps:
                check = loop.accumulation_check(step) if step.depth == 0 else None
                if check is None:
                    continue
                for work in works:
                    if id(work.site.node) in reported or not _every_micro_batch(loop, work, step, check):
                        continue
                    reported.add(id(work.site.node))
                    yield self._every_micro_batch(context, loop, work, works, step, check)
            yield from self._inner(context, loop, works, reported)
            finding = self._still_scaled(context, loop, works, reported)
            if finding is not None:
                yield finding

    def _every_micro_batch(self, context: FileContext, loop: TrainingLoop, work: _Work, works: List[_Work],
                           step: StepSite, check: AccumulationCheck) -> Finding:
        what, step_code = context.code(work.site.node), context.site_code(step)
        condition = f"`{context.code(check.guard.test)}`" + (" is false" if check.guard.negated else "")
        head = f"`{what}` runs on every micro-batch but `{step_code}` only when {condition}"
        counted = check.counted_by
        if counted is not None and loop.in_branch(work.site, dataclasses.replace(check, counted_by=None)):
            # `glb_step % f == 0` in `actual_step % n == 0`: the window is `n * f` micro-batches, the clip runs every n
            also = f"`{context.code(counted.guard.test)}`" + (" is false" if counted.guard.negated else "")
            head = (f"`{what}` runs every `{context.code(check.count.left)}` micro-batches ({condition}) but "
                    f"`{step_code}` only when {also} too, every `{context.code(check.count)}` micro-batches")
        updates_every = any(other.kind == "update" and other.receiver == work.receiver
                            and _every_micro_batch(loop, other, step, check) for other in works)
        return Finding(work.site.node, _message(context, loop, work, works, head, updates_every),
                       _move(context, loop, work, works, step, check), timeline=_timeline(loop, work, step, check))

    def _inner(self, context: FileContext, loop: TrainingLoop, works: List[_Work],
               reported: Set[int]) -> Iterator[Finding]:
        """Unscales, clips and scaler updates on every iteration of a loop that is an accumulation window by
        itself, the step after the loop (`TrainingLoop.inner_window`)."""
        window = loop.inner_window
        if window is None:
            return
        every = [work for work in works if not work.site.guards and not loop.in_accumulate_context(work.site)
                 and _concerns_window(loop, work, window)]
        step_code = context.code(window.step.node)
        header = f"for {context.code(loop.node.target)} in {context.quote(loop.node.iter)}"
        for work in every:
            if id(work.site.node) in reported:
                continue
            reported.add(id(work.site.node))
            head = (f"`{context.code(work.site.node)}` runs on every micro-batch of `{header}`, but `{step_code}` "
                    f"only once, after the loop")
            updates_every = any(other.kind == "update" and other.receiver == work.receiver for other in every)
            yield Finding(work.site.node, _message(context, loop, work, works, head, updates_every),
                          _move_out(context, loop, work, window))

    def _still_scaled(self, context: FileContext, loop: TrainingLoop, works: List[_Work],
                      reported: Set[int]) -> Optional[Finding]:
        """The first torch clip that may run after a scaled backward with no `unscale_` before it."""
        scaled = [b for b in loop.loop_backwards if b.kind == "scaler" and not _disabled(context, b.receiver)]
        for work in works:
            clip = work.site
            if not work.raw_clip or clip.depth or id(clip.node) in reported:
                continue
            if not _still_scaled_at(context, loop, works, clip):
                continue
            steps = [s for s in loop.optimizer_steps
                     if s.via_scaler and s.depth == 0 and loop.precedes(clip, s)]
            if not steps:
                continue
            step = steps[0]
            scaler, optimizer = context.code(step.node.func.value), context.code(positional(step.node, 0))
            clip_code = context.code(clip.node)
            limit = positional(clip.node, 1) or keyword(clip.node, "max_norm") or keyword(clip.node, "clip_value")
            threshold = f"`{context.code(limit)}`" if limit is not None else "the threshold"
            message = (f"`{clip_code}` clips gradients that are still multiplied by `{scaler}`'s scale (the "
                       f"backward ran through `{scaler}.scale(...)`, and no `{scaler}.unscale_({optimizer})` comes "
                       f"before it): {threshold} is compared with a norm the scale makes thousands of times too "
                       f"large, and `{scaler}.step({optimizer})` then divides the clipped gradients by the scale, "
                       f"so each update is tiny.")
            fix = None
            same_scaler = all(backward.receiver == scaler for backward in scaled)
            if len(steps) == 1 and same_scaler and clip.on_own_line and loop.runs_whenever(step, clip):
                edit = context.insert_line_before(clip.statement, f"{scaler}.unscale_({optimizer})")
                fix = Fix(SAFE, f"Insert `{scaler}.unscale_({optimizer})` before the clip", (edit,))
            return Finding(clip.node, message, fix)
        return None

    valid = (
        # Unscale, clip, step and update once per window.
        """
for i, (x, y) in enumerate(loader):
    scaler.scale(criterion(model(x), y) / accum).backward()
    if (i + 1) % accum == 0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        # No accumulation: clipping on every iteration is clipping before every step.
        """
import torch
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad()
""",
        # Accelerate: the prepared optimizer steps at the boundary, clipping waits for `sync_gradients`.
        """
for batch in loader:
    with accelerator.accumulate(model):
        accelerator.backward(model(**batch).loss)
        if accelerator.sync_gradients:
            accelerator.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
""",
        # A flag computed from the window.
        """
for i, (x, y) in enumerate(loader):
    sync = (i + 1) % accum == 0
    scaler.scale(criterion(model(x), y) / accum).backward()
    if sync:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    if (i + 1) % accum == 0:
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        # The unscale_ may run first: without AMP the scaler is disabled and the clip sees true gradients.
        """
from torch.nn.utils import clip_grad_norm_
for x, y in loader:
    scaler.scale(criterion(model(x), y)).backward()
    if use_amp:
        scaler.unscale_(optimizer)
    clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
""",
    )
    invalid = (
        # The step every `log_every` windows of `accum` micro-batches: the clip goes next to it, before the
        # step's own `if`, where it runs on every boundary of the wider window.
        Example(
            """
import torch
micro, windows = 0, 0
for x, y in loader:
    (criterion(model(x), y) / (accum * log_every)).backward()
    micro += 1
    if micro % accum == 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        windows += 1
        if windows % log_every == 0:
            if optimizer is not None:
                optimizer.step()
                optimizer.zero_grad()
            scheduler.step()
optimizer.step()
""",
            line=8,
            fixed="""
import torch
micro, windows = 0, 0
for x, y in loader:
    (criterion(model(x), y) / (accum * log_every)).backward()
    micro += 1
    if micro % accum == 0:
        windows += 1
        if windows % log_every == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            if optimizer is not None:
                optimizer.step()
                optimizer.zero_grad()
            scheduler.step()
optimizer.step()
""",
        ),
        Example(
            """
import torch
for i, (x, y) in enumerate(loader):
    scaler.scale(criterion(model(x), y) / accum_steps).backward()
    scaler.unscale_(optimizer)
    if (i + 1) % accum_steps == 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
            line=5,
            fixed="""
import torch
for i, (x, y) in enumerate(loader):
    scaler.scale(criterion(model(x), y) / accum_steps).backward()
    if (i + 1) % accum_steps == 0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        ),
        Example(
            """
from torch.nn.utils import clip_grad_norm_
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / args.accum
    loss.backward()
    clip_grad_norm_(model.parameters(), args.max_norm)
    if (step + 1) % args.accum == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            line=6,
            fixed="""
from torch.nn.utils import clip_grad_norm_
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / args.accum
    loss.backward()
    if (step + 1) % args.accum == 0:
        clip_grad_norm_(model.parameters(), args.max_norm)
        optimizer.step()
        optimizer.zero_grad()
""",
        ),
        # `scaler.update()` where nothing stepped.
        Example(
            """
for i, (x, y) in enumerate(loader):
    scaler.scale(criterion(model(x), y) / n).backward()
    if (i + 1) % n == 0:
        scaler.step(optimizer)
        optimizer.zero_grad()
    scaler.update()
""",
            line=7,
            fixed="""
for i, (x, y) in enumerate(loader):
    scaler.scale(criterion(model(x), y) / n).backward()
    if (i + 1) % n == 0:
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        ),
        # Clipping scaled gradients.
        Example(
            """
import torch
scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
""",
            line=8,
            fixed="""
import torch
scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
""",
        ),
        # The clip's norm is logged on every micro-batch: moving it is a choice the code does not settle.
        Example(
            """
import torch
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / n).backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    if (i + 1) % n == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            line=5,
            unsafe=True,
            fixed="""
import torch
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / n).backward()
    if (i + 1) % n == 0:
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
""",
        ),
    )


def _message(context: FileContext, loop: TrainingLoop, work: _Work, works: List[_Work], head: str,
             updates_every: bool) -> str:
    """What happens when `work` runs on every micro-batch (`head` says where and how often the step runs)."""
    if work.kind == "unscale" and updates_every:
        message = (f"{head}: with `{work.receiver}.update()` on every micro-batch too, the window's gradients "
                   f"already in `.grad` are divided by the scale again after each micro-batch, so the step "
                   f"applies the early micro-batches' gradients shrunk by the scale.")
    elif work.kind == "unscale":
        message = (f"{head}: its second call in a window raises \"unscale_() has already been called on this "
                   f"optimizer since the last update()\".")
    elif work.kind == "update":
        message = (f"{head}: on the first micro-batch that does not step, it fails with \"No inf checks were "
                   f"recorded prior to update.\"")
    else:
        message = (f"{head}: it clips partial sums of the window, so whenever one exceeds the threshold the "
                   f"micro-batches before it are scaled down, and the step does not apply the clipped gradient "
                   f"of the whole window.")
        if work.raw_clip and _still_scaled_at(context, loop, works, work.site):
            message += " The gradients it clips are also still multiplied by the loss scale."
    return message


def _concerns_window(loop: TrainingLoop, work: _Work, window: InnerWindow) -> bool:
    """`work` acts on the gradients the step after an inner loop applies."""
    if work.kind == "update":
        return any(step.via_scaler and dotted_name(step.node.func.value) == work.receiver for step in window.steps)
    if work.kind == "unscale":
        optimizer = dotted_name(work.argument) if work.argument is not None else None
        return optimizer is None or optimizer == window.optimizer or window.optimizer in loop.names.aliases_of(optimizer)
    return True  # a clip: the window's optimizer is the only one that steps


def _move_out(context: FileContext, loop: TrainingLoop, work: _Work, window: InnerWindow) -> Optional[Fix]:
    """Move `work` out of the inner loop, next to the step after it: an update right after the step, a clip right
    before it, an unscale before the first clip after the loop (else before the step). None when the step is
    not a line of the loop's own block, or the statement sits under a `with` of its own, or reads a name the
    loop assigns (after the loop that name holds its last micro-batch's value)."""
    site = work.site
    if not window.step_alone or site.via is not None or site.guards or site.contexts:
        return None
    if not isinstance(site.statement, cst.SimpleStatementLine) or len(site.statement.body) != 1:
        return None
    statement = site.statement.body[0]
    read = getattr(statement, "value", None)
    if read is None or any(loop.assigned_in_loop(name) for name in set(iter_names(read))):
        return None
    applicability = SAFE if isinstance(statement, cst.Expr) else UNSAFE
    what, step = context.code(statement), window.step
    if work.kind == "update":
        fix = context.move_after(site, step, f"Move `{what}` after `{context.site_code(step)}`")
        return fix if applicability == SAFE else None
    anchor: Site = step
    if work.kind == "unscale":
        lines = [line for line in window.between if isinstance(line, cst.SimpleStatementLine)]
        if any(isinstance(call.func, cst.Attribute) and call.func.attr.value == "unscale_"
               for line in lines for call in calls_in(line)):
            return None  # the window already unscales after the loop
        clips = [(line, call) for line in lines for call in calls_in(line)
                 if _CLIP_CALL.match(last_component(dotted_name(call.func) or ""))]
        if clips:
            anchor = Site(0, clips[0][1], clips[0][0], (), (), 0)
    return context.move_before(site, anchor, f"Move `{what}` before `{context.site_code(anchor)}`", applicability)


def _works(context: FileContext, loop: TrainingLoop) -> List[_Work]:
    """The loop's unscales, scaler updates and gradient clips, outside nested loops."""
    names = context.names
    found: List[_Work] = []
    for call in loop.calls:
        if call.depth or not isinstance(call.node, cst.Call):
            continue
        func = call.node.func
        receiver = dotted_name(func.value) if isinstance(func, cst.Attribute) else None
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        if method == "unscale_" and receiver is not None and roles.is_scaler(receiver, names):
            found.append(_Work(call, "unscale", receiver=receiver, argument=positional(call.node, 0)))
        elif method == "update" and receiver is not None and not call.node.args and roles.is_scaler(receiver, names):
            found.append(_Work(call, "update", receiver=receiver))
        elif call.callee is not None and _CLIP_CALL.match(last_component(call.callee)):
            qualified = names.callee(call.node)
            raw = qualified in _TORCH_CLIPS or (
                call.callee in ("clip_grad_norm_", "clip_grad_value_") and call.callee not in names.functions)
            found.append(_Work(call, "clip", raw_clip=raw))
    for step in loop.steps:  # `grad_clipper.step(params)`: an object of a gradient-clipping class
        if step.depth == 0 and not step.via_scaler and step.receiver not in loop.optimizer_names and any(
                isinstance(value, cst.Call) and _CLIPPER_CLASS.search(dotted_name(value.func) or "")
                for value in names.values_of(step.receiver)):
            found.append(_Work(step, "clip"))
    return sorted(found, key=lambda work: work.site.order)


def _every_micro_batch(loop: TrainingLoop, work: _Work, step: StepSite, check: AccumulationCheck) -> bool:
    """`work` acts on `step`'s gradients on micro-batches where `step` does not run, and no other step of
    them follows it there (the `else` of `if accum > 1:` steps on every iteration)."""
    if not _concerns(loop, work, step):
        return False
    if loop.once_per_window(work.site, check) or _boundary_guarded(loop, work.site, check):
        return False
    return not any(other.depth == 0 and _concerns(loop, work, other) and loop.runs_whenever(other, work.site)
                   for other in loop.optimizer_steps)


def _concerns(loop: TrainingLoop, work: _Work, step: StepSite) -> bool:
    """`work` acts on the gradients `step` applies."""
    if work.kind == "update":
        return step.via_scaler and dotted_name(step.node.func.value) == work.receiver
    single = len({s.receiver for s in loop.optimizer_steps}) == 1
    if work.kind == "unscale":
        optimizer = dotted_name(work.argument) if work.argument is not None else None
        return optimizer == step.receiver or (single and optimizer is None) or (
            optimizer is not None and step.receiver in loop.names.aliases_of(optimizer))
    if single:
        return True
    read = set(iter_names(work.site.node))
    models = dict(loop.optimizer_models).get(step.receiver, frozenset())
    return step.receiver in read or any(roles.same_module(name, model) for name in read for model in models)


def _boundary_guarded(loop: TrainingLoop, site: Site, check: AccumulationCheck) -> bool:
    """`site` waits for the window's end in a way only this rule reads: a framework's boundary flag
    (`accelerator.sync_gradients`, `engine.is_gradient_accumulation_boundary()`), or a name one of whose
    values is the window's condition (`TrainingLoop.once_per_window` reads a flag only when one
    assignment gives it its value on every path)."""
    for guard in site.guards:
        test, holds = guard.test, not guard.negated
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, holds = test.expression, not holds
        if holds and any(last_component(name) in _BOUNDARY_FLAGS for name in iter_names(test)):
            return True
        if not isinstance(test, cst.Name):
            continue
        for value in loop.values_at(test.value, site):
            if value is None:
                continue
            if any(own.same_window(check) for own in checks_in(value, guard, holds)):
                return True
    return False


def _still_scaled_at(context: FileContext, loop: TrainingLoop, works: List[_Work], site: Site) -> bool:
    """A backward through an enabled `GradScaler` may run before `site`, and no unscale may."""
    scaled = [b for b in loop.loop_backwards if b.kind == "scaler" and not _disabled(context, b.receiver)]
    if not any(loop.precedes(backward, site) for backward in scaled):
        return False
    unscales = [work.site for work in works if work.kind == "unscale"] + [
        call for call in loop.calls if call.callee is not None and "unscale" in last_component(call.callee)]
    return not any(loop.precedes(unscale, site) for unscale in unscales)


def _disabled(context: FileContext, scaler: Optional[str]) -> bool:
    """`GradScaler(enabled=False)`: scaling, unscaling and clipping order do nothing."""
    values = context.names.values_of(scaler) if scaler else []
    return bool(values) and all(
        isinstance(value, cst.Call) and isinstance(keyword(value, "enabled"), cst.Name)
        and keyword(value, "enabled").value == "False" for value in values)


def _move(context: FileContext, loop: TrainingLoop, work: _Work, works: List[_Work], step: StepSite,
          check: AccumulationCheck) -> Optional[Fix]:
    """Move `work` into the step's branch: an update right after the step, anything else right before it
    (an unscale before the branch's first clip). None when the move could change what the statement does."""
    site = work.site
    step_guards = {(id(guard.node), guard.negated) for guard in step.guards}
    if any((id(guard.node), guard.negated) not in step_guards for guard in site.guards):
        return None  # under a condition of its own, which moving the line alone would drop
    if any(all(item is not other for other in step.contexts) for item in site.contexts):
        return None
    if not isinstance(site.statement, cst.SimpleStatementLine) or not site.statement.body:
        return None
    statement = site.statement.body[0]
    read = getattr(statement, "value", None)  # what an expression statement or an assignment reads
    if read is None or any(_definitions(loop, name, site) != _definitions(loop, name, step)
                           for name in set(iter_names(read))):
        return None  # it reads a name the loop assigns again before the step
    applicability = SAFE if isinstance(statement, cst.Expr) else UNSAFE
    what = context.code(statement)
    if work.kind == "update":
        fix = context.move_after(site, step, f"Move `{what}` after `{context.site_code(step)}`")
        return fix if applicability == SAFE else None
    anchor: Site = step
    if work.kind == "unscale":
        clips = [other.site for other in works if other.kind == "clip" and loop.in_branch(other.site, check)
                 and loop.dominates(other.site, step)]
        anchor = next((clip for clip in clips if not any(loop.dominates(c, clip) for c in clips if c is not clip)),
                      step)
    if work.kind == "clip" and anchor is step:
        own = _own_step_condition(step, site, check)
        if own is not None:
            if own.after_continue or not isinstance(own.node, cst.If) or not site.on_own_line \
                    or any(isinstance(part, cst.If) and part.orelse is own.node for part in preorder(loop.node)):
                return None
            # `if optimizer1 is not None: optimizer1.step()` in the window's branch: the clip goes before that `if`,
            # where it still runs for another optimizer's step beside it.
            return Fix(applicability, f"Move `{what}` before `if {context.code(own.test)}:`",
                       (context.delete_lines(site.statement), context.insert_line_before(own.node, what)))
    return context.move_before(site, anchor, f"Move `{what}` before `{context.site_code(anchor)}`", applicability)


def _own_step_condition(step: StepSite, site: Site, check: AccumulationCheck):
    """The outermost condition of the step's own that is not its window's and that `site` does not run under
    (`if optimizer1 is not None:`), if any."""
    window = {id(check.guard.node)} | ({id(check.counted_by.guard.node)} if check.counted_by is not None else set())
    shared = {(id(guard.node), guard.negated) for guard in site.guards}
    return next((guard for guard in step.guards
                 if (id(guard.node), guard.negated) not in shared and id(guard.node) not in window), None)


def _timeline(loop: TrainingLoop, work: _Work, step: StepSite, check: AccumulationCheck) -> Optional[str]:
    """How often the statement and the step run on a concrete run."""
    run = loop.run_of(step, check)
    if run is None:
        return None
    name = {"unscale": "the unscale", "update": "the scaler update", "clip": "the clip"}[work.kind]
    where = "after each step" if work.kind == "update" else "right before each step"
    return (f"{run.header()}: {name} runs after every micro-batch ({run.length} times), the optimizer steps "
            f"after micro-batches {listing(run.steps)} ({len(run.steps)} times)\n"
            f"expected: {name} after micro-batches {listing(run.steps)} only, {where}")


def _definitions(loop: TrainingLoop, name: str, where: Site) -> Set[Tuple[int, str, int]]:
    """The definitions of `name` reaching `where`, by what they are (a `start` one is made afresh for
    each question, so identity would not do)."""
    return {(d.index, d.kind, d.node) for d in loop.reaching(name, where)}
