"""TL009 scheduler-step-order: the LR scheduler steps before the optimizer, or on every micro-batch.

## What it does

Flags `scheduler.step()` inside a training loop when it runs before
`optimizer.step()` in the iteration, or when it runs on every micro-batch
while `optimizer.step()` is conditional (gradient accumulation). The
optimizer is the one the scheduler was built on (`StepLR(opt_g, ...)`) when
the code shows it, else the loop's first optimizer.

Stepped on every micro-batch, a schedule is on time when its horizon counts
micro-batches. The horizon is read from the scheduler's construction in the
file (`T_max`, `total_iters`, `num_training_steps`, `OneCycleLR`'s
`total_steps` or `epochs * steps_per_epoch`): divided by the accumulation
count (`len(loader) // accum * epochs`) it counts updates, and the schedule
runs `N`× too fast: flagged. The length of the iterable the loop runs times
the epochs (`len(loader) * epochs`), or the `n` of `for it in range(n)`, is
counted in micro-batches: not flagged. Where the code does not show the
horizon (a scheduler passed in, `LambdaLR`, `StepLR`'s `step_size`) nothing
says the schedule is too fast, and that claim is not made; a scheduler that
runs before the optimizer's step in the iteration is still flagged for that.

Inside `with accelerator.accumulate(model):`, by an `Accelerator` built in
the file with `gradient_accumulation_steps=N` (or a plugin's `num_steps=`),
the optimizer that `accelerator.prepare` wrapped steps only at the end of
each window of `N` micro-batches, though the loop calls it on every one; a
scheduler it prepared advances with it. A scheduler it never saw (not among
the arguments of any `.prepare(...)` in the file) advances on every
micro-batch: flagged when its horizon counts updates, as above. The finding
has no fix: the scheduler belongs among what `accelerator.prepare(...)` is
handed.

## Why is this bad?

Since PyTorch 1.1 the scheduler must step after the optimizer. Stepping it
first skips the first value of the schedule (PyTorch warns "Detected call of
`lr_scheduler.step()` before `optimizer.step()`" once, then stays silent)
and shifts the whole schedule by one. Stepping it on every micro-batch while
the optimizer steps once per window decays the learning rate `N`× too fast:
warm-up ends early and the run finishes on a learning rate it was never
meant to reach.

## Example

```python
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / accum_steps).backward()
    scheduler.step()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
```

## Use instead

```python
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / accum_steps).backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
```

Not flagged: a scheduler stepped before the optimizer in a project whose
every allowed torch is older than 1.1 (`torch==0.4.1` or `torch<1.1` in its
`requirements.txt`, `setup.py`, `pyproject.toml` or `environment.yml`, the
nearest folder above the file that names torch deciding), where that was the
documented order; a project that pins nothing, or allows 1.1 or later
(`torch>=0.4`), is read as today's torch. Schedulers stepped once per epoch outside the batch loop,
`ReduceLROnPlateau`-style `scheduler.step(metric)` calls (and any `step()`
given an argument, like `CosineAnnealingWarmRestarts`' fractional epoch), and
a scheduler under its own `if` on the same accumulation window as the
optimizer.

## Fix safety

Safe where the code settles it: a scheduler that runs before the optimizer
belongs just after it, and a schedule whose horizon counts updates (divided
by the accumulation count) belongs in the step's window. The fix moves
`scheduler.step()` to just after `optimizer.step()`, inside its block. Unsafe
where the horizon is not known: had it counted micro-batches, the moved
scheduler would run `N`× too slow. Unsafe too where something after the
optimizer's step in the iteration reads the learning rate
(`optimizer.param_groups[0]["lr"]`, `scheduler.get_last_lr()`, a helper of
the file that does, the scheduler or the optimizer handed to other code): it
would read the next update's rate instead of the one the step used, and an
LR sweep would pair every loss with the wrong rate.
"""

from __future__ import annotations

from typing import Iterator, Optional

from torchlint.context import FileContext
from torchlint.model import SAFE, UNSAFE, WARNING
from torchlint.names import positional
from torchlint.rules import Example, Finding, Rule
from torchlint.training.timeline import listing
from torchlint.training import AccumulationCheck, StepSite, TrainingLoop, frameworks


class SchedulerStepOrder(Rule):
    code = "TL009"
    name = "scheduler-step-order"
    severity = WARNING
    summary = "LR scheduler stepped before the optimizer, or on every micro-batch"

    def check(self, context: FileContext) -> Iterator[Finding]:
        for loop in context.loops:
            for scheduler in loop.scheduler_steps:
                if scheduler.depth or positional(scheduler.node, 0) is not None or scheduler.node.args:
                    continue
                step = _step_scheduled_by(loop, scheduler)
                if step is None:
                    continue
                check = loop.accumulation_check(step)
                if check is None:
                    finding = _unprepared(context, loop, scheduler, step)
                    if finding is not None:
                        yield finding
                        continue
                per_micro_batch = check is not None and not loop.once_per_window(scheduler, check)
                problem = self._problem(context, loop, scheduler, step, check, per_micro_batch)
                if problem is None:
                    continue
                sched_code, step_code = context.code(scheduler.node), context.site_code(step)
                if problem == "before":
                    message = (
                        f"`{sched_code}` runs before `{step_code}`: PyTorch skips the first value of the "
                        f"schedule (and warns once), so every learning rate comes one step early."
                    )
                else:
                    condition = f"`{context.code(check.guard.test)}`"
                    if check.guard.negated:  # in the `else`, or after `if ...: continue`
                        condition += " is false"
                    count = context.code(check.count)
                    consequence = (f"the schedule, whose horizon counts updates (divided by `{count}`), "
                                   f"advances `{count}`× too fast.")
                    message = (
                        f"`{sched_code}` runs on every micro-batch but `{step_code}` only when "
                        f"{condition}: {consequence}"
                    )
                # Into the step's window only where the horizon is known to count updates: were it counted in
                # micro-batches, the moved scheduler would run `N`× too slow.
                # Moving a scheduler that runs on every micro-batch into the step's window slows it `N`×: right
                # only where its horizon counts updates.
                # What the rest of the iteration reads as the learning rate would be the next update's.
                sure = (problem == "every-microbatch" or not per_micro_batch) \
                    and not loop.learning_rate_read_after(step, scheduler.receiver)
                fix = context.move_after(scheduler, step, f"Move `{sched_code}` after `{step_code}`",
                                         SAFE if sure else UNSAFE)
                timeline = _timeline(loop, step, check) if problem == "every-microbatch" else None
                yield Finding(scheduler.node, message, fix, timeline=timeline)

    @staticmethod
    def _problem(context: FileContext, loop, scheduler, step, check, per_micro_batch: bool) -> Optional[str]:
        # Too fast only where the horizon is known to count updates; one that counts micro-batches is on
        # time, and an unknown one says nothing.
        if per_micro_batch and loop.schedule_counts(scheduler, check) == "updates":
            return "every-microbatch"
        if loop.dominates(scheduler, step) and not _before_1_1(context):
            return "before"
        return None

    valid = (
        """
for x, y in loader:
    criterion(model(x), y).backward()
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad()
""",
        # Per epoch, outside the batch loop.
        """
for epoch in range(epochs):
    for x, y in loader:
        criterion(model(x), y).backward()
        optimizer.step()
        optimizer.zero_grad()
    scheduler.step()
""",
        # ReduceLROnPlateau takes a metric.
        """
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    plateau.step(loss.item())
""",
        """
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / n).backward()
    if (i + 1) % n == 0:
        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()
""",
        # Its own `if` on the same window.
        """
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / n).backward()
    if (i + 1) % n == 0 or (i + 1) == len(loader):
        optimizer.step()
        optimizer.zero_grad()
    if (i + 1) % n == 0:
        lr_scheduler.step()
""",
    )
    invalid = (
        # Accelerate steps the optimizer it prepared once per window; the scheduler it never saw, every micro-batch.
        Example(
            """
import torch
from accelerate import Accelerator
from transformers import get_linear_schedule_with_warmup
accelerator = Accelerator(gradient_accumulation_steps=accum)
optimizer = torch.optim.AdamW(model.parameters())
lr_scheduler = get_linear_schedule_with_warmup(optimizer, 100, len(loader) // accum * epochs)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for batch in loader:
    with accelerator.accumulate(model):
        accelerator.backward(model(**batch).loss)
        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()
""",
            line=13,
        ),
        Example(
            """
from torch.optim.lr_scheduler import OneCycleLR
sched = OneCycleLR(optimizer, max_lr=0.1, total_steps=100)
for x, y in loader:
    optimizer.zero_grad()
    sched.step()
    criterion(model(x), y).backward()
    optimizer.step()
""",
            line=6,
            fixed="""
from torch.optim.lr_scheduler import OneCycleLR
sched = OneCycleLR(optimizer, max_lr=0.1, total_steps=100)
for x, y in loader:
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
    sched.step()
""",
        ),
        Example(
            """
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / accum_steps).backward()
    scheduler.step()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            line=4,
            # The scheduler's horizon is not shown: had it counted micro-batches, the move would slow it down.
            unsafe=True,
            fixed="""
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / accum_steps).backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
""",
        ),
        # The horizon counts updates: the scheduler belongs in the step's window.
        Example(
            """
import torch
num_updates = len(loader) // accum_steps * epochs
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=num_updates)
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / accum_steps).backward()
    scheduler.step()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            line=7,
            fixed="""
import torch
num_updates = len(loader) // accum_steps * epochs
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=num_updates)
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / accum_steps).backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
""",
        ),
        # GAN: the generator's scheduler steps before the generator's optimizer.
        Example(
            """
import torch
sched_d = torch.optim.lr_scheduler.StepLR(opt_d, 1000)
sched_g = torch.optim.lr_scheduler.StepLR(opt_g, 1000)
for real in loader:
    opt_d.zero_grad()
    d_loss(real).backward()
    opt_d.step()
    sched_d.step()
    sched_g.step()
    opt_g.zero_grad()
    g_loss(real).backward()
    opt_g.step()
""",
            line=10,
            fixed="""
import torch
sched_d = torch.optim.lr_scheduler.StepLR(opt_d, 1000)
sched_g = torch.optim.lr_scheduler.StepLR(opt_g, 1000)
for real in loader:
    opt_d.zero_grad()
    d_loss(real).backward()
    opt_d.step()
    sched_d.step()
    opt_g.zero_grad()
    g_loss(real).backward()
    opt_g.step()
    sched_g.step()
""",
        ),
    )


def _before_1_1(context: FileContext) -> bool:
    """Every torch the project allows is older than 1.1 (`torch==0.4.1` in its `requirements.txt`), where the
    scheduler stepped first, as documented then."""
    project = context.names.project
    return project is not None and project.torch_pin().below((1, 1))


def _unprepared(context: FileContext, loop: TrainingLoop, scheduler: StepSite, step: StepSite) -> Optional[Finding]:
    """Inside `with accelerator.accumulate(model):`, a prepared optimizer steps once per window, but a scheduler
    that `accelerator.prepare` never saw advances on every micro-batch: too fast when its horizon counts updates."""
    if scheduler.guards:
        return None  # `if accelerator.sync_gradients:`
    window = frameworks.accelerate_window(loop, scheduler)
    if window is None or window != frameworks.accelerate_window(loop, step):
        return None
    if not frameworks.prepared_by(loop, step.receiver, window.accelerator) \
            or frameworks.may_be_prepared(scheduler.receiver, context.source) \
            or loop.schedule_counts(scheduler, window) != "updates":
        return None
    count = context.code(window.count)
    message = (
        f"`{context.code(scheduler.node)}` runs on every micro-batch inside `{window.accelerator}.accumulate(...)`, "
        f"but `{context.site_code(step)}` acts only once every `{count}` micro-batches (`{window.accelerator}"
        f".prepare` wrapped `{step.receiver}`, not `{scheduler.receiver}`): the schedule, whose horizon counts "
        f"updates (divided by `{count}`), advances `{count}`× too fast. Pass `{scheduler.receiver}` to "
        f"`{window.accelerator}.prepare(...)`, which steps it with the optimizer."
    )
    return Finding(scheduler.node, message, None)


def _step_scheduled_by(loop: TrainingLoop, scheduler: StepSite) -> Optional[StepSite]:
    """The optimizer step that `scheduler` follows: its own optimizer's (`StepLR(opt_g, ...)`),
    else the loop's first optimizer step."""
    steps = [step for step in loop.optimizer_steps if step.depth == 0]
    optimizer = dict(loop.scheduled_optimizers).get(scheduler.receiver)
    own = [step for step in steps if step.receiver == optimizer]
    return (own or steps or [None])[0]


def _timeline(loop: TrainingLoop, step: StepSite, check: AccumulationCheck) -> Optional[str]:
    """How often the scheduler and the optimizer step on a concrete run."""
    run = loop.run_of(step, check)
    if run is None:
        return None
    return (f"{run.header()}: the scheduler steps after every micro-batch ({run.length} times), the optimizer "
            f"after micro-batches {listing(run.steps)} ({len(run.steps)} times)\n"
            f"expected: both after micro-batches {listing(run.steps)}")
