"""TL003 unscaled-accumulated-loss: a mean-reduced loss not divided under gradient accumulation.

## What it does

Flags the `backward()` of a gradient-accumulation loop (backward on every
micro-batch, the optimizer step guarded by `i % N` or a micro-batch counter,
also in the `else` of such a test or after `if (i + 1) % N != 0: continue`)
when the loss is a mean (any torch criterion without `reduction='sum'`, an
`F.*` loss, Hugging Face `outputs.loss`, or an unknown callable, since
PyTorch's default reduction is the mean) and is not divided by the
accumulation count before `backward()`. The same loss backpropagated on
either branch of an `if` (`scaler.scale(loss).backward()` with AMP,
`loss.backward()` without) is one bug: one finding, at the first, whose fix
divides the loss once, before the `if`.

The step may also test where the micro-batch sits in its window when that
position is computed elsewhere: `slot = i % N` (or a function of the file
returning `i % n`) and `if slot == N - 1:`, or a generator of the file that
yields `{"grad_accum_index": c % n, ...}` (or `c % n` as a tuple element)
for a counter it moves by one per yield, read by the loop as
`meta["grad_accum_index"] == args.grad_accum_steps - 1` (also `+ 1 == N`,
`== 0`); `N` is then what the loop's call passes for `n`.

The backward may run in a function of the same file that the loop calls
(`self.training_step(batch)`, a nested `micro_step(...)`, the `__call__` of
an object of a class of the file), and the loss may come from one (`loss =
compute_loss(model, batch)`, traced through its `return`) or be the one the
loop passes it (`micro_step(loss, optimizer, update=...)` backpropagating its
`loss` parameter as it came in): the finding is then at the backward, says
which loop calls it, and has no fix (the count is the caller's, and other
callers would change).
The backward and the step may also run in another file of the project: an
`engine.py` loop calling `loss_scaler(loss, optimizer, update_grad=(i + 1) %
accum_iter == 0)`, whose `__call__` in `util/misc.py` backpropagates the loss
it is passed and steps under `if update_grad:` (the scaler built in
`main.py` and handed to the loop's function). The finding is then at that
call, names the file and line of the other half, and its fix divides the
loss the call passes (`loss_scaler(loss / accum_iter, ...)`).
Also flagged: a window written as a loop of its own, a backward on each of
its micro-batches and one `optimizer.step()` after the loop (before any
other backward or reset), with a mean loss not divided by how many there
are: `for _ in range(grad_accum):` whose body reads its counter only to
compare it (`micro == grad_accum - 1`) or to cut a slice (`x[m * b:(m + 1)
* b]`), each iteration drawing its micro-batch (`next(it)`, a replay
buffer's `sample()`); and micro-batches cut from the batch (`for s in
range(0, len(x), m)` over `x[s:s + m]`, `zip(x.chunk(k), y.chunk(k))`,
`x.split(m)`), reported without a fix since the last slice may be shorter.
A loop whose iterations differ otherwise (`for head in heads`, `for t in
range(n_tasks): heads[t](...)`) computes the parts of one objective, not
micro-batches: not flagged, nor a loop that steps inside, leaves early
(`break`), whose count is 1, or whose gradients are rescaled between the
loop and the step.

The step may sit under a further condition on a counter of the windows
(`glb_step += 1` where `actual_step % N == 0` holds, then `if glb_step % F ==
0:` around the step): the window is then `N * F` micro-batches, and the loss
is to be divided by `N * F`.

## Why is this bad?

Each micro-batch loss is already an average over its samples. `backward()`
*adds* gradients, so after `N` micro-batches `.grad` holds the sum of `N`
averages: `N` times the gradient of the large batch the accumulation is
meant to imitate. The step is `N`× too large (for SGD exactly a learning
rate `N`× too high; for Adam the clipping and epsilon behaviour change).

## Example

```python
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
```

## Use instead

```python
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss = loss / accum_steps
    loss.backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
```

Losses built with `reduction='sum'` are not flagged: their sum over the
window already equals the large batch's sum. Nor is a loss whose reduction
the run chooses (`reduction=args.reduction`, `size_average=flag`,
`**loss_kwargs`): it is not known to be a mean. Frameworks that scale for you
(`with accelerator.accumulate(model)`, Lightning's `accumulate_grad_batches`)
are not flagged either, nor is a step that follows its own reset inside the
condition (a GAN generator updated every `n_critic` iterations): that is a
schedule, not accumulation. Token-count normalisation is not flagged: each
loss multiplied by its token count, and the gradients divided by the
window's token count before the step (`p.grad.div_(n_tokens)`, `p.grad /=
n_tokens`, a helper of the file that scales every gradient, or a library
one named for it like `scale_grads(model, 1 / n_tokens)`) is the right way
to accumulate token means. Gradients divided by the window's count while
the mean loss was *not* multiplied by its own count are reported, without a
fix: the gradient comes out too small. Gradients divided in place by a
constant once per window, after its backwards and before the step
(`for p in model.parameters(): p.grad.div_(accum_steps)`, `p.grad /= 4`,
a config value the loop does not assign), are the same as `loss /
accum_steps`: not flagged; divided so on every micro-batch, the earlier
micro-batches' gradients are divided again and again: reported, without a
fix. A division that only some paths make is not
enough (`if use_amp: loss = loss / n`), except one whose condition tests
the count itself (`if n > 1: loss = loss / n`).

## Fix safety

Safe: the accumulation count is right there in the step's condition (or in
the inner loop's `range(N)`). The fix inserts `loss = loss / N` before the
backward (or divides the expression passed to it), with `N` spelled as in
the condition.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterator, List, Optional, Set, Tuple

import libcst as cst

from torchlint.context import FileContext
from torchlint.model import ERROR, SAFE, Fix
from torchlint.rules import Example, Finding, Rule
from torchlint.training import AccumulationCheck, BackwardSite, LossOrigin, StepSite, TrainingLoop

_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)


class UnscaledAccumulatedLoss(Rule):
    code = "TL003"
    name = "unscaled-accumulated-loss"
    severity = ERROR
    summary = "mean-reduced loss not divided by the accumulation count before `backward()`"

    def check(self, context: FileContext) -> Iterator[Finding]:
        for loop in context.loops:
            reported = set()
            for step in loop.optimizer_steps:
                check = loop.accumulation_check(step)
                if check is None:
                    continue
                if loop.gradients_divided(step, check) is not None:
                    continue  # `p.grad.div_(accum)` once per window: the same as `loss / accum`
                repeated = loop.constant_gradient_divisions(step)
                normalised = loop.gradients_normalised(step)
                for backward, origin in _micro_batch_losses(context, loop, step, check):
                    if id(backward) in reported or origin.divided or not origin.is_mean:
                        continue
                    if origin.weighted:
                        # `loss * n_tokens` with the gradients divided by the window's count: token-count
                        # normalisation; without it, a mean times its micro-batch's size is a sum over its
                        # samples (YOLO's `loss * bs`), summed over the window as `reduction='sum'` is.
                        continue
                    # The same loss's backward on the other branch (`scaler.scale(loss).backward()` /
                    # `loss.backward()`) is the same bug: one finding, whose fix divides before the branches.
                    others = loop.alternatives(backward)
                    reported.update(id(site) for site in (backward, *others))
                    if repeated:
                        yield self._divided_every_microbatch(context, backward, check, repeated[0], origin)
                    elif normalised is not None:
                        yield self._unweighted(context, backward, step, normalised, origin)
                    else:
                        finding = self._finding(context, loop, backward, step, check, origin, others)
                        yield replace(finding, timeline=_timeline(loop, step, check))
            yield from self._inner(context, loop)

    def _inner(self, context: FileContext, loop: TrainingLoop) -> Iterator[Finding]:
        """A loop that is a window by itself (`TrainingLoop.inner_window`): `for _ in range(grad_accum)` over
        micro-batches, or the slices or chunks of one batch, a backward on each and one optimizer step after
        the loop. A mean loss must be divided by the number of micro-batches."""
        window = loop.inner_window
        if window is None or window.rescaled:
            return  # the gradients are rescaled between the loop and the step
        if any(not reset.guards for reset in loop.window_resets(window)):
            return  # reset on every micro-batch: only the last one is stepped on (TL007's)
        reported: Set[int] = set()
        for backward in loop.loop_backwards:
            if backward.loss is None or id(backward) in reported or _framework_scales(context, loop, backward):
                continue
            if backward.via is None and backward.loss_name is not None \
                    and loop.accumulator(backward.loss_name) is not None:
                continue  # a running sum backpropagated again on every iteration: TL001's
            origin = loop.origin(backward.loss, backward, context.names)
            if origin.divided or not origin.is_mean or origin.weighted:
                continue
            others = loop.alternatives(backward)
            reported.update(id(site) for site in (backward, *others))
            loss = context.code(backward.loss)
            source = f" (`{origin.sources[0]}`)" if origin.sources else ""
            step = context.code(window.step.node)
            count = window.count.describe(context.code)
            if not window.count.exact:
                batch = context.code(window.count.batch)
                part = "slice" if window.count.kind == "slices" else "chunk"
                message = (
                    f"`{loss}` is a mean over each {part} of `{batch}`{source} but is not divided by the number of "
                    f"{part}s ({count}) before `backward()`: the {part}s' gradients are summed and "
                    f"`{step}` after the loop applies that many times the batch's mean gradient. "
                    f"Divide `{loss}` by the number of {part}s (or by the batch size, with `reduction='sum'`)."
                )
                yield Finding(backward.node, message)
                continue
            also = "".join(f" (nor before `{context.code(other.node)}` at line {context.site_line(other)})"
                           for other in others)
            message = (
                f"`{loss}` is a mean over each micro-batch{source} but is not divided by {count} before "
                f"`backward()`{also}: the loop runs {window.count.describe(context.code, known=True)} micro-batches per step and their gradients add up, "
                f"so `{step}` after it applies {count}× the large-batch gradient."
            )
            yield Finding(backward.node, message,
                          _division(context, loop, backward, window.count.count, others, inner=True))

    @staticmethod
    def _divided_every_microbatch(context, backward, check, division, origin) -> Finding:
        """The gradients are divided by a constant on every micro-batch, not once per window."""
        loss, count = context.code(backward.loss), context.code(check.count)
        source = f" (`{origin.sources[0]}`)" if origin.sources else ""
        message = (
            f"`{loss}` is a mean over each micro-batch{source}, and `{context.code(division.node)}` divides the "
            f"gradients on every micro-batch, not once per window of `{count}`: the gradients the window's earlier "
            f"micro-batches left are divided again with each later one, so they weigh less and less. Divide "
            f"`{loss}` by `{count}` before `backward()` instead (or divide the gradients once, just before the step)."
        )
        return Finding(backward.node, message)

    @staticmethod
    def _unweighted(context, backward, step, normalised, origin) -> Finding:
        """The gradients are divided by the window's count, but the loss was not multiplied by its own."""
        loss = context.code(backward.loss)
        source = f" (`{origin.sources[0]}`)" if origin.sources else ""
        message = (
            f"`{loss}` is a mean over each micro-batch{source}, and `{context.code(normalised.node)}` divides "
            f"the window's summed gradients by a count again before `{step.receiver}.step()`: the gradient "
            f"comes out too small, and every micro-batch weighs the same whatever its size. Multiply `{loss}` "
            f"by its micro-batch's count (token-count normalisation), or drop the rescaling."
        )
        return Finding(backward.node, message)

    def _finding(self, context, loop, backward, step, check, origin, others=()) -> Finding:
        loss = context.code(backward.loss)
        count = context.code(check.count)
        source = f" (`{origin.sources[0]}`)" if origin.sources else ""
        also = "".join(f" (nor before `{context.site_code(other)}` at line {context.site_line(other)})"
                       for other in others)
        message = (
            f"`{loss}` is a mean over each micro-batch{source} but is not divided by `{count}` before "
            f"`backward()`{also}: the gradients of `{count}` micro-batches are summed, so each "
            f"`{step.receiver}.step()` applies `{count}`× the large-batch gradient."
        )
        return Finding(backward.node, message, _division(context, loop, backward, check.count, others))

    valid = (
        # Multiplied by a precomputed reciprocal.
        """
scale = 1.0 / accum
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) * scale
    loss.backward()
    if (i + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        # Every `n_critic` iterations the generator takes a whole step of its own: not accumulation.
        """
for i, real in enumerate(loader):
    opt_d.zero_grad()
    critic(generator(noise()).detach()).mean().backward()
    opt_d.step()
    if i % n_critic == 0:
        opt_g.zero_grad()
        (-critic(generator(noise())).mean()).backward()
        opt_g.step()
""",
        # Divided before backward, in any spelling.
        """
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / accum
    loss.backward()
    if (i + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        """
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    if accum > 1:
        loss = loss / accum
    scaler.scale(loss).backward()
    if (i + 1) % accum == 0:
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        """
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss /= args.gradient_accumulation_steps
    loss.backward()
    if (i + 1) % args.gradient_accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        # A summed loss: the window's sum is already the large batch's sum.
        """
import torch.nn as nn
criterion = nn.MSELoss(reduction="sum")
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    if (i + 1) % 4 == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        # Accelerate scales inside `accumulate()`.
        """
for batch in loader:
    with accelerator.accumulate(model):
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
""",
        # No accumulation: the step runs every iteration.
        """
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
""",
    )
    invalid = (
        # The window's gradients are divided by its token count, but the loss was not weighted by its own.
        Example(
            """
def normalise(model, n):
    for p in model.parameters():
        p.grad.div_(n)


tokens = 0
for i, batch in enumerate(loader):
    tokens += batch["labels"].ne(-100).sum()
    loss = model(**batch).loss
    loss.backward()
    if (i + 1) % accum == 0:
        normalise(model, tokens)
        optimizer.step()
        optimizer.zero_grad()
        tokens = 0
""",
            line=11,
        ),
        # The step is skipped with `continue` until the window is full.
        Example(
            """
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    if (i + 1) % accum_iter != 0:
        continue
    optimizer.step()
    optimizer.zero_grad()
""",
            line=4,
            fixed="""
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss = loss / accum_iter
    loss.backward()
    if (i + 1) % accum_iter != 0:
        continue
    optimizer.step()
    optimizer.zero_grad()
""",
        ),
        Example(
            """
import torch.nn as nn
criterion = nn.CrossEntropyLoss()
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            line=6,
            fixed="""
import torch.nn as nn
criterion = nn.CrossEntropyLoss()
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss = loss / accum_steps
    loss.backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        ),
        Example(
            """
from torch.nn import functional as F
for step, batch in enumerate(tqdm(loader)):
    out = model(batch["x"])
    F.mse_loss(out, batch["y"]).backward()
    if (step + 1) % cfg.train.accum == 0:
        self.optimizer.step()
        self.optimizer.zero_grad()
""",
            line=5,
            fixed="""
from torch.nn import functional as F
for step, batch in enumerate(tqdm(loader)):
    out = model(batch["x"])
    (F.mse_loss(out, batch["y"]) / cfg.train.accum).backward()
    if (step + 1) % cfg.train.accum == 0:
        self.optimizer.step()
        self.optimizer.zero_grad()
""",
        ),
        Example(
            """
micro = 0
while True:
    outputs = model(**next(batches))
    scaler.scale(outputs.loss).backward()
    micro += 1
    if micro == grad_accum:
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        micro = 0
""",
            line=5,
            fixed="""
micro = 0
while True:
    outputs = model(**next(batches))
    scaler.scale(outputs.loss / grad_accum).backward()
    micro += 1
    if micro == grad_accum:
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        micro = 0
""",
        ),
    )


def _division(context: FileContext, loop: TrainingLoop, backward: BackwardSite, count_node: cst.BaseExpression,
              others: Tuple[BackwardSite, ...] = (), inner: bool = False) -> Optional[Fix]:
    """Divide the loss by the accumulation count before `backward()`: `loss = loss / N` on a line of its own,
    before the `if` whose branches hold the backwards of the same loss, or the backward's argument divided."""
    if backward.via is not None and not backward.elsewhere:
        return None  # in a function the loop calls: the count is the caller's, and other callers would change
    # (one of another file backpropagates the loss the loop's call passes: the call's argument is divided)
    loss, count = context.code(backward.loss), context.code(count_node)
    divisor = count if isinstance(count_node, _ATOMS) else f"({count})"
    # `loss = loss / N` would also change what the loop reads of `loss` after the backward (the logged
    # loss): divide the backward's argument alone there.
    # An inner window's loss may also be read after the window (`print(loss.item())` before the step).
    read_later = backward.via is None and (loop.read_later(loss, backward) or inner and loop.read_after_loop(loss))
    if others:
        # Divided once, before the `if` whose branches hold the backwards.
        split = loop.split_between(backward, others[0]) if len(others) == 1 else None
        if split is None or not isinstance(backward.loss, cst.Name) or read_later:
            return None
        edit = context.insert_line_before(split, f"{loss} = {loss} / {divisor}")
    elif isinstance(backward.loss, cst.Name) and backward.on_own_line and not read_later:
        edit = context.insert_line_before(backward.statement, f"{loss} = {loss} / {divisor}")
    else:
        scaled = loss if isinstance(backward.loss, _ATOMS) else f"({loss})"
        # A method's receiver needs parentheses; a call's argument (also the one a call of the loop passes to
        # a function of another file that backpropagates it) does not.
        divided = f"{scaled} / {divisor}"
        receiver = backward.kind == "tensor" and not backward.elsewhere
        edit = context.replace(backward.loss, f"({divided})" if receiver else divided)
    return Fix(SAFE, f"Divide `{loss}` by `{count}` before `backward()`", (edit,))


def _micro_batch_losses(
    context: FileContext, loop: TrainingLoop, step: StepSite, check: AccumulationCheck
) -> List[Tuple[BackwardSite, LossOrigin]]:
    """The backwards of each micro-batch's own loss, with where that loss comes from.

    Those outside the step's branch, and, inside it, a backward of the same
    loss (DDP's `if not boundary: with model.no_sync(): ... else: ...`). A
    loss summed over the window and backpropagated once at its end is not one.
    """
    traced = [
        (backward, loop.origin(backward.loss, backward, context.names))
        for backward in loop.accumulated_backwards(step, check)
        if backward.loss is not None and not _framework_scales(context, loop, backward)
        and not loop.in_branch(backward, check)
    ]
    sources = {origin.sources for _, origin in traced}
    for backward in loop.loop_backwards:
        if backward.loss is None or not loop.in_branch(backward, check) or _framework_scales(context, loop, backward):
            continue
        if backward.loss_name is not None and loop.accumulator(backward.loss_name) is not None:
            continue
        origin = loop.origin(backward.loss, backward, context.names)
        if origin.sources in sources:
            traced.append((backward, origin))
    return sorted(traced, key=lambda pair: pair[0].order)


def _framework_scales(context: FileContext, loop: TrainingLoop, backward: BackwardSite) -> bool:
    """Accelerate, DeepSpeed or Lightning divide the loss themselves here."""
    if loop.in_accumulate_context(backward):
        return True
    if backward.kind != "framework":
        return False
    owner = backward.receiver or ""
    constructed = context.names.values_of(owner)
    if not constructed:
        return True  # unknown framework object: it may scale, stay quiet
    for value in constructed:
        if not isinstance(value, cst.Call):
            return True
        if any(arg.keyword is not None and arg.keyword.value == "gradient_accumulation_steps" for arg in value.args):
            return True
    return False


def _timeline(loop: TrainingLoop, step: StepSite, check: AccumulationCheck) -> Optional[str]:
    """The windows of a concrete run, and what dividing by N makes of each step."""
    run = loop.run_of(step, check)
    if run is None or not run.steps:
        return None
    sums = ", ".join(f"{size}×" for size in run.windows[:6]) + (", …" if len(run.windows) > 6 else "")
    return run.lines(f"each loss divided by {run.count}, so each step applies its window's mean gradient "
                     f"(undivided: {sums} a micro-batch's)")

