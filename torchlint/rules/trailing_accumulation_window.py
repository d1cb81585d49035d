"""TL010 trailing-accumulation-window: the last, partial accumulation window is never applied.

## What it does

Flags the step condition of a gradient-accumulation loop when it cannot hold
on the last micro-batch of the loop (`(i + 1) % N == 0` with `i` from
`enumerate(loader)`, or `i % N == 0` with a 1-based `i`) and nothing after
the loop flushes the gradients that are left (`optimizer.step()` after the
loop). The count may be kept by hand: set before the loop in each epoch and
bumped on every micro-batch (CodeT5's `nb_tr_steps += 1` before `if
nb_tr_steps % N == 0:`), it numbers the micro-batches as `enumerate` does.

## Why is this bad?

When the number of micro-batches is not a multiple of `N`, the last few
micro-batches of the epoch add their gradients to `.grad` and the loop ends
before the step. Those gradients are never applied in this epoch; worse,
since nothing resets them, they leak into the first window of the next
epoch, which then steps on more than `N` micro-batches. Where the loop is the
whole run (no epoch loop around it, in a function called once), they are
simply lost.

## Example

```python
for epoch in range(epochs):
    for i, (x, y) in enumerate(loader):
        (criterion(model(x), y) / accum_steps).backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
```

## Use instead

```python
for epoch in range(epochs):
    for i, (x, y) in enumerate(loader):
        (criterion(model(x), y) / accum_steps).backward()
        if (i + 1) % accum_steps == 0 or (i + 1) == len(loader):
            optimizer.step()
            optimizer.zero_grad()
```

Also flagged: a condition that steps on the *first* micro-batch of each
window (`i % N == 0` with a 0-based `i`, TL004's bug) leaves the micro-batches
after the epoch's last step behind too; both findings come on the first run.
So does a window counted since the last step (YOLOv5's and YOLOv9's
`ni - last_opt_step >= accumulate` with `last_opt_step = ni` in the step's
branch; also `> N - 1`, `last + N <= ni`, the difference held in a name; a
count set back to 0 at each step, `micro == N` or FastSpeech2's `if
forward_count != N: continue`, also over a loop with no counter of its own):
with `optimizer.zero_grad()` before each epoch's loop the left-over
micro-batches are thrown away; where the mark runs on from epoch to epoch
with nothing resetting between them, they join the next epoch's first window
and only the last epoch's are lost (a step after the epochs' loop applies
them: not flagged). A step of each optimizer in a loop over them (`for
optimizer in self.optimizers: optimizer.step()`) is the step.

A flush or a last-batch test that only runs in an epoch no longer than one
window (`if len(loader) <= N:` after the loop, `or (len(loader) <= N and i +
1 == len(loader))`) leaves a longer epoch's partial window behind: flagged,
also with the length held in a name (`n = len(loader)`; older Hugging Face
`Trainer.train` loops' `steps_in_epoch <= N and (step + 1) ==
steps_in_epoch`, which holds only while `step + 1 <= N`, whatever
`steps_in_epoch` is).
So is a window kept in an object's attributes by a method a loop of the file
calls once per micro-batch (`self.n_iter += 1; if self.n_iter % self.accum
== 0:` in `optimize()`), when the caller sets the count back after the loop
(`learner.end_epoch()`) with no step between.

So is Ignite's process function (`trainer = Engine(update)`) stepping when
`engine.state.iteration % N == 0`: Ignite counts the iteration from 1 across
the epochs of `trainer.run(data, max_epochs=E)`, which runs `E ×
len(data)` of them (`epoch_length=` if given), so only the run's last
partial window is left, when nothing steps after it: every handler the file
attaches to an engine (lambdas and functions of the file, read through the
engines they run; Ignite's own checkpoints, loggers, metrics and schedulers,
which step nothing) is read, and any that may step the optimizer (`@trainer.on(
Events.EPOCH_COMPLETED)` calling `optimizer.step()`), one the file cannot
read, or an engine handed to code the file does not show leaves it quiet, as
does an `epoch_length` that is a multiple of `N` (`epoch_length=N * k`).
The backward may run in a method the loop's class inherits from the Hugging
Face `Trainer` (`self.training_step(model, inputs)` in a subclass's own copy
of the epoch loop, which does not override it): Hugging Face's runs one.

Not flagged: a flush after the loop (`optimizer.step()` following it), a
condition that already mentions the loop's length (`or i + 1 == len(loader)`,
also through a name: `last_batch = batch_idx == len(loader) - 1`) or tests
the counter against a count the code holds before the loop (`or num_steps ==
num_batches_per_epoch - 1` with `num_batches_per_epoch = loader.num_batches`,
`i + 1 >= steps_per_epoch`): the author's own test for the last micro-batch,
which nothing shows to miss it (a literal, `or step == 0`, or the length of
the micro-batch itself, `len(x)`, is no such test),
iterables whose length is known and lines up with `N` (`range(64)` with
`N = 8`, `range(N * updates)`, a `DataLoader(TensorDataset(torch.randn(64,
...)), batch_size=8)` with constants for size, batch size and `drop_last`;
also a count that pytest runs the test with, each value listed in
`@pytest.mark.parametrize("accum", [1, 10])` and each dividing the length,
or a count the function holding the loop takes from whatever runs it, when
every place the file runs it passes a value known there and each divides
the length: `train(model, accum=4)`, `partial(train, accum=4)()`, a worker
called through a launcher, `init_distributed(dp=2)(_run)(accum=accum)` in a
test parametrized with `[1, 10]`; a use the file does not show the
arguments of, `mp.spawn(train, args=...)`, or a call from another file of
the project, leaves the count unknown),
endless iterables (`enumerate(itertools.cycle(loader))`), loops that leave
out a last partial window (`if i // N >= windows_per_epoch: continue`), and
gradients normalised by hand before the step by a running count (token-count
normalisation: `num_tokens += n` ... `scale_grads(model, 1 / num_tokens)`),
where the micro-batches left over join the next window with their weight:
only when the count and the gradients run on together. A count started again
in each epoch while the gradients run on (`for epoch ...: num_tokens = 0`),
or gradients reset beside the loop (`optimizer.zero_grad()` just before or
after it) while the count runs on, leave the last window misweighted or
thrown away: flagged. A division by a constant (`p.grad.div_(accum_steps)`)
is not a normalisation: flagged like `loss / accum_steps`.

## Fix safety

Unsafe: whether the partial window should be applied (scaled by `1/N`, as
the fix does) or dropped is a training decision, and the extra step changes
how many optimizer steps an epoch takes (which a scheduler may count). The
fix adds `or (i + 1) == len(<iterable>)` to the condition (to a
`if (i + 1) % N != 0: continue` it adds `and (i + 1) != len(<iterable>)`), and
alike to the condition of the optimizer's reset where it tests the same window
apart from the step (`if (i + 1) % N == 0: optimizer.zero_grad()` beside a
`loss_scaler(..., update_grad=(i + 1) % N == 0)` whose step runs in another
file): the gradients the extra step applies are reset too; it
is not offered where the iterable is known to have no length (a generator,
`iter(...)`, a `DataLoader` over an `IterableDataset` or a streamed dataset):
the finding then says to step once more after the loop.
"""

from __future__ import annotations

from typing import Iterator, List, Optional, Set, Tuple

import libcst as cst

from torchlint.context import FileContext
from torchlint.model import UNSAFE, WARNING, Fix
from torchlint.names import ModuleNames, dotted_name, int_value, iter_names, positional
from torchlint.rules import Example, Finding, Rule
from torchlint.training import AccumulationCheck, LoopCounter, StepSite, TrainingLoop
from torchlint.training.frameworks import IgniteRun
from torchlint.training.loop import executed
from torchlint.training.tokens import same_every_micro_batch
from torchlint.training.windows import checks_in, known_length, sized, walk_counter
from torchlint.walk import calls_in, contains, preorder


class TrailingAccumulationWindow(Rule):
    code = "TL010"
    name = "trailing-accumulation-window"
    severity = WARNING
    summary = "accumulation whose last partial window is never stepped"

    def check(self, context: FileContext) -> Iterator[Finding]:
        for loop in context.loops:
            for step, check, counter, first in _trailing_windows(loop, context.names):
                if counter.run is not None:
                    if counter.run.may_flush() is False:
                        yield self._run_finding(context, loop, step, check, counter)
                    continue
                if _flushed_after(loop, step.receiver, check.count) or _flushed_after_run(loop, step, check):
                    continue
                iterable = counter.iterable
                count = context.code(check.count)
                condition = check.condition
                fate = _fate(loop, step.receiver, check)
                short = _short_epoch_flush(loop, step.receiver, check.count)
                if short is not None:
                    after = (f"the `{step.receiver}.step()` after the loop runs only when `{context.code(short)}`, "
                             f"an epoch no longer than one window")
                elif counter.restarted_after is not None:
                    after = (f"`{context.code(counter.restarted_after).strip()}` after the loop that calls "
                             f"`{loop.function.name.value}()` starts `{counter.name}` again without "
                             f"`{step.receiver}.step()`")
                else:
                    after = f"nothing after the loop calls `{step.receiver}.step()`"
                if first == SINCE:
                    waits = "skips the step until" if check.negated else "steps once"
                    message = (
                        f"`{context.quote(condition)}` {waits} `{count}` micro-batches have run since the last "
                        f"step, and {after}: when the number of "
                        f"micro-batches is not a multiple of `{count}`, those after the loop's last step are not "
                        f"applied{fate}."
                    )
                elif first == 1:
                    # `if (i + 1) % n != 0: continue` (or its `else`) skips the step while its test holds.
                    blocks = "is still true" if check.negated else "cannot hold"
                    if not check.negated and len(_end_tests(loop, condition, check)) < len(_disjuncts(condition)):
                        blocks = "does not hold, in an epoch longer than one window,"
                    message = (
                        f"`{context.quote(condition)}` {blocks} on the last micro-batch, and {after}: "
                        f"when the number of micro-batches is not a "
                        f"multiple of `{count}`, the last window's gradients are never applied{fate}."
                    )
                else:
                    when = "at the start of each window" if first == 0 else "one micro-batch before each window ends"
                    message = (
                        f"`{context.quote(condition)}` steps {when} of `{count}`, not at its end, and {after}: "
                        f"the micro-batches after the loop's last "
                        f"step are never applied{fate}."
                    )
                run = loop.run_of(step, check)
                fix = None
                if not counter.name:  # the loop has no counter to test for its last micro-batch
                    running = _running_mark(check)
                    where = "the epochs' loop" if running is not None and loop.carried_into_next_run(running) \
                        else "the loop"
                    message += f" Call `{step.receiver}.step()` once more after {where}."
                elif sized(iterable, context.names, loop.known_value) is not False:
                    fix = self._fix(context, check, counter, loop.first_value(counter, check.read_at(step)),
                                    iterable, condition, _reset_conditions(loop, step, check))
                elif iterable is not None:
                    message += (f" `{context.code(iterable)}` has no length to test for the last micro-batch: "
                                f"call `{step.receiver}.step()` once more after the loop.")
                yield Finding(check.expression, message, fix, timeline=run.lines() if run is not None else None)

    @staticmethod
    def _run_finding(context: FileContext, loop: TrainingLoop, step: StepSite, check: AccumulationCheck,
                     counter: LoopCounter) -> Finding:
        """Ignite's `engine.state.iteration` numbers the run's iterations across its epochs: only the run's last
        partial window is left behind, and only a step when the run ends applies it."""
        run = counter.run
        length = f"`{context.code(run.epoch_length)}`" if run.epoch_length is not None \
            else f"`len({context.code(run.data)})`" if run.data is not None else "the epoch's length"
        epochs = f"`{context.code(run.epochs)}`" if run.epochs is not None else "1"
        message = (
            f"`{context.code(check.condition)}` steps after every `{context.code(check.count)}` iterations of "
            f"`{context.code(run.call)}`, which counts `{counter.name}` on from 1 across its epochs and runs "
            f"{epochs} × {length} of them, and no handler attached to `{run.engine}`, nor anything after the run, "
            f"calls `{step.receiver}.step()`: when that number is not a multiple of "
            f"`{context.code(check.count)}`, the gradients of the run's last iterations are never applied. Step "
            f"`{step.receiver}` once more in a handler of `Events.COMPLETED`."
        )
        timeline = loop.run_of(step, check)
        return Finding(check.expression, message, None, timeline=timeline.lines() if timeline is not None else None)

    @staticmethod
    def _fix(context: FileContext, check, counter, first, iterable, condition, resets=()) -> Optional[Fix]:
        """Let the step through on the last micro-batch; `resets`: the conditions of the optimizer's resets
        that test the same window apart from the step (`if (i + 1) % n == 0: optimizer.zero_grad()` beside
        `loss_scaler(..., update_grad=(i + 1) % n == 0)`), rewritten alike, so the gradients the last step
        applies are reset too. `first`: the counter's value on the first micro-batch, where the step reads it
        (`nb_tr_steps += 1` before the test: 1)."""
        if not isinstance(iterable, (cst.Name, cst.Attribute)):
            return None
        length = f"len({context.code(iterable)})"
        last = f"({counter.name} + 1)" if first == 0 else counter.name
        edits = []
        for test, negated in ((condition, check.negated), *resets):
            if negated:
                rewritten = f"{_grouped(context, test, cst.Or)} and {last} != {length}"
            else:
                rewritten = f"{_grouped(context, test, cst.And)} or {last} == {length}"
            edits.append(context.replace(test, rewritten))
        if check.negated:
            title = f"Do not skip the step on the last micro-batch (`{last} != {length}`)"
        else:
            title = f"Also step on the last micro-batch (`{last} == {length}`)"
        return Fix(UNSAFE, title, tuple(edits))

    valid = (
        """
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / n).backward()
    if (i + 1) % n == 0 or (i + 1) == len(loader):
        optimizer.step()
        optimizer.zero_grad()
""",
        # Flushed after the loop.
        """
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / n).backward()
    if (i + 1) % n == 0:
        optimizer.step()
        optimizer.zero_grad()
optimizer.step()
optimizer.zero_grad()
""",
        # The length is a known multiple of the count.
        """
for i in range(64):
    (criterion(model(xs[i]), ys[i]) / 8).backward()
    if (i + 1) % 8 == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        # The last batch is named through the `range` bound.
        """
for b in range(1, num_batches + 1):
    (criterion(model(xs[b]), ys[b]) / n).backward()
    if b % n == 0 or b == num_batches:
        optimizer.step()
        optimizer.zero_grad()
""",
        # No accumulation.
        """
for x, y in loader:
    criterion(model(x), y).backward()
    optimizer.step()
    optimizer.zero_grad()
""",
        # The last batch, named before the step's condition.
        """
last_idx = len(loader) - 1
for batch_idx, (x, y) in enumerate(loader):
    last_batch = batch_idx == last_idx
    (criterion(model(x), y) / n).backward()
    if (batch_idx + 1) % n == 0 or last_batch:
        optimizer.step()
        optimizer.zero_grad()
""",
        # A window counted since the last step whose mark never moves is a threshold.
        """
start = 0
for i, (x, y) in enumerate(loader):
    criterion(model(x), y).backward()
    if i - start >= warmup:
        optimizer.step()
    optimizer.zero_grad()
""",
        # A multiple of the count by construction; an endless stream.
        """
import itertools
for step in range(n * updates):
    (criterion(model(xs[step]), ys[step]) / n).backward()
    if (step + 1) % n == 0:
        optimizer.step()
        optimizer.zero_grad()
for i, (x, y) in enumerate(itertools.cycle(loader)):
    (criterion(model(x), y) / n).backward()
    if (i + 1) % n == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
    )
    invalid = (
        Example(
            """
for epoch in range(epochs):
    for i, (x, y) in enumerate(loader):
        (criterion(model(x), y) / accum_steps).backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
            line=5,
            fixed="""
for epoch in range(epochs):
    for i, (x, y) in enumerate(loader):
        (criterion(model(x), y) / accum_steps).backward()
        if (i + 1) % accum_steps == 0 or (i + 1) == len(loader):
            optimizer.step()
            optimizer.zero_grad()
""",
            unsafe=True,
        ),
        Example(
            """
for step, batch in enumerate(train_dataloader, start=1):
    loss = model(**batch).loss / args.gradient_accumulation_steps
    loss.backward()
    if step % args.gradient_accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            line=5,
            fixed="""
for step, batch in enumerate(train_dataloader, start=1):
    loss = model(**batch).loss / args.gradient_accumulation_steps
    loss.backward()
    if step % args.gradient_accumulation_steps == 0 or step == len(train_dataloader):
        optimizer.step()
        optimizer.zero_grad()
""",
            unsafe=True,
        ),
        # The step is skipped with `continue` until the window is full.
        Example(
            """
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / n).backward()
    if (i + 1) % n != 0:
        continue
    optimizer.step()
    optimizer.zero_grad()
""",
            line=4,
            fixed="""
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / n).backward()
    if (i + 1) % n != 0 and (i + 1) != len(loader):
        continue
    optimizer.step()
    optimizer.zero_grad()
""",
            unsafe=True,
        ),
        Example(
            """
for i, batch in enumerate(tqdm(batches())):
    (model(batch).loss / 4).backward()
    if (i + 1) % 4 == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            line=4,
        ),
        # The progress bar is built before the loop.
        Example(
            """
pbar = tqdm(enumerate(loader), total=len(loader))
for i, (x, y) in pbar:
    (criterion(model(x), y) / n).backward()
    if (i + 1) % n == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            line=5,
            fixed="""
pbar = tqdm(enumerate(loader), total=len(loader))
for i, (x, y) in pbar:
    (criterion(model(x), y) / n).backward()
    if (i + 1) % n == 0 or (i + 1) == len(loader):
        optimizer.step()
        optimizer.zero_grad()
""",
            unsafe=True,
        ),
        # A window counted since the last step, the epoch's gradients reset before its loop.
        Example(
            """
last_opt_step = -1
for epoch in range(epochs):
    optimizer.zero_grad()
    for i, (x, y) in enumerate(loader):
        ni = i + nb * epoch
        criterion(model(x), y).backward()
        if ni - last_opt_step >= accumulate:
            optimizer.step()
            optimizer.zero_grad()
            last_opt_step = ni
""",
            line=8,
            fixed="""
last_opt_step = -1
for epoch in range(epochs):
    optimizer.zero_grad()
    for i, (x, y) in enumerate(loader):
        ni = i + nb * epoch
        criterion(model(x), y).backward()
        if ni - last_opt_step >= accumulate or (i + 1) == len(loader):
            optimizer.step()
            optimizer.zero_grad()
            last_opt_step = ni
""",
            unsafe=True,
        ),
        # An iterator has no length: no `len()` fix.
        Example(
            """
batches = iter(loader)
for epoch in range(epochs):
    for i, (x, y) in enumerate(batches):
        (criterion(model(x), y) / n).backward()
        if (i + 1) % n == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
            line=6,
        ),
    )


def _reset_conditions(loop: TrainingLoop, step: StepSite, check: AccumulationCheck
                      ) -> List[Tuple[cst.BaseExpression, bool]]:
    """The `if` tests (and whether the reset runs where they are false) that gate a reset of the stepped
    optimizer on the same window as `check`, apart from the step's own condition: the step in a function of
    another file under `update_grad=(i + 1) % n == 0`, the reset in the loop under `if (i + 1) % n == 0:`."""
    found: List[Tuple[cst.BaseExpression, bool]] = []
    single = len(loop.optimizer_names) == 1
    for reset in loop.resets:
        if reset.kind != "zero_grad" or not (reset.target == step.receiver or single):
            continue
        for guard in reset.guards:
            if guard.test is check.condition or guard.test is check.guard.test or guard.after_continue:
                continue
            if any(own.same_window(check) for own in checks_in(guard.test, guard, not guard.negated)) \
                    and all(test is not guard.test for test, _ in found):
                found.append((guard.test, guard.negated))
    return found


def _grouped(context: FileContext, condition: cst.BaseExpression, binds_looser: type) -> str:
    """The condition's code, parenthesised when its operator binds looser than the one added."""
    code = context.code(condition)
    if isinstance(condition, cst.BooleanOperation) and isinstance(condition.operator, binds_looser):
        return f"({code})"
    return code


def _trailing_windows(loop: TrainingLoop, names: ModuleNames) -> List[Tuple[StepSite, AccumulationCheck, LoopCounter,
                                                                          int]]:
    """Steps whose window condition does not line up with the loop's last micro-batch, with the value
    the condition's operand has on the first micro-batch (1 for `(i + 1) % N == 0` over `enumerate`)."""
    found = []
    for step in loop.window_steps:  # `scaler.step(opt)` / `opt.step()` of one window: one finding
        if not loop.steps_each_walked(step) or not any(loop.precedes(backward, step)
                                                      for backward in loop.loop_backwards):
            continue
        for check in loop.accumulation_checks(step):
            if check.counted_by is not None:
                continue  # a window of windows (`glb_step % f == 0` in `i % n == 0`): no one condition to extend
            counter = loop.counter(check.counter)
            if check.kind == "count" and not _counts_window_from_one(loop, check, counter):
                continue
            if check.kind in ("since", "count"):  # any count that advances with the micro-batches; the end is the
                counter = next((c for c in loop.counters if c.source != "manual" or c.paced), None)  # loop's
                if counter is None and isinstance(loop.node, cst.For):
                    counter = walk_counter(loop.node, names, loop.iterable_before_loop)
            if counter is None or (counter.source not in ("enumerate", "range", "walk") and counter.run is None
                                   and counter.restarted_after is None and not counter.paced) or counter.endless:
                continue
            if check.kind in ("since", "count"):
                # `ni - last_opt_step >= N`, `micro == N` with `micro = 0` at the step: N micro-batches since
                # the last step, wherever it was
                first = SINCE
            elif check.kind != "modulo" or check.remainder not in ("zero", "last"):
                continue
            else:
                first = loop.first_value(counter, check.read_at(step))
                if first is None:
                    continue
                first += check.offset + (1 if check.remainder == "last" else 0)
                if first not in (0, 1, 2):
                    continue
            tests = (check.guard.test,) if check.held is None else (check.guard.test, check.held)
            at = step.point[0]
            if any(_mentions_end(loop, part, counter, at) for test in tests
                   for part in _end_tests(loop, test, check)) or any(
                _mentions_end(loop, part, counter, at)
                for test in tests for kept in _end_tests(loop, test, check)
                for other in _other_operands(kept, check.expression) for part in _expanded(loop, other, step)
            ):
                continue
            # A window counted since the last step lines up with the loop's end at best as one numbered from its
            # first micro-batch does: quiet where that one would be.
            lined_up = 1 if first == SINCE else first
            if _closes_on_last(loop, counter, check.count, lined_up, names) or _whole_windows_only(loop, step, check):
                continue
            if loop.normalisation_carries_over(step):
                continue  # normalised by a running count: left-over micro-batches join the next window, weighed
            found.append((step, check, counter, first))
            break
    return found


SINCE = -1  # `_trailing_windows`' `first` for a window counted since the last step


def _counts_window_from_one(loop: TrainingLoop, check: AccumulationCheck, counter: Optional[LoopCounter]) -> bool:
    """`micro == N` (`>=`, `!= N: continue`) where `micro` starts at 0, is bumped before the test and set back to
    0 where the step runs: the step comes after exactly N micro-batches counted since the last one."""
    if counter is None or counter.start != 0 or check.remainder != "count" or check.offset != 0:
        return False
    if counter.increment is None or loop.first_value(counter, check.read_at(check.guard.read_at)) != 1:
        return False
    restarts = [a for a in loop.assignments if a.target == counter.name and not a.reads_target]
    return bool(restarts) and all(int_value(a.value) == 0 and loop.in_branch(a, check) for a in restarts)


def _flushed_after(loop: TrainingLoop, optimizer: str, count: cst.BaseExpression) -> bool:
    """`optimizer.step()` (or `scaler.step(optimizer)`) runs right after the loop: not one that runs only when the
    epoch is no longer than one window (`if len(loader) <= accum:`), which leaves a longer epoch's last
    partial window where it is."""
    for statement in loop.statements_after():
        if isinstance(statement, cst.If) and statement.orelse is None \
                and _shorter_than_window(loop, statement.test, count):
            continue
        if _steps(statement, optimizer):
            return True
    return False


def _flushed_after_run(loop: TrainingLoop, step: StepSite, check: AccumulationCheck) -> bool:
    """A window counted since the last step whose mark runs on from epoch to epoch (`micro` set to 0 once, before
    the epochs' loop) leaves a partial window behind only after the last epoch: a step after the epochs' loop
    (in the same function) applies it."""
    running = _running_mark(check)
    if running is None or not loop.carried_into_next_run(running):
        return False
    for statements, index in loop.enclosing[:-1]:
        if isinstance(statements[index], (cst.For, cst.While)) and any(
                _steps(statement, step.receiver) for statement in executed(statements[index + 1:])):
            return True
    return False


def _steps(statement: cst.CSTNode, optimizer: str) -> bool:
    """`statement` calls `optimizer.step()` or `scaler.step(optimizer)`."""
    for call in calls_in(statement):
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "step":
            continue
        first = positional(call, 0)
        if dotted_name(func.value) == optimizer or (first is not None and dotted_name(first) == optimizer):
            return True
    return False


def _short_epoch_flush(loop: TrainingLoop, optimizer: str, count: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The test of an `if len(loader) <= accum:` after the loop that steps `optimizer`: a flush of short epochs only."""
    for statement in loop.statements_after():
        if isinstance(statement, cst.If) and statement.orelse is None \
                and _shorter_than_window(loop, statement.test, count) and _steps(statement, optimizer):
            return statement.test
    return None


def _shorter_than_window(loop: TrainingLoop, test: cst.BaseExpression, count: cst.BaseExpression) -> bool:
    """`len(loader) <= accum` (`<`, or `accum >= len(loader)`), also with the length held in a name before the
    loop (`n = len(loader)`): true only for an epoch of at most one window."""
    length = _bounded_by(test, count)
    if isinstance(length, cst.Name):
        length = loop.value_before_loop(length.value)
    return isinstance(length, cst.Call) and dotted_name(length.func) == "len"


def _bounded_by(test: cst.BaseExpression, count: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`x` of `x <= count` (`x < count`, `count >= x`, `count > x`)."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    operator, right = test.comparisons[0].operator, test.comparisons[0].comparator
    if isinstance(operator, (cst.LessThan, cst.LessThanEqual)):
        bounded, bound = test.left, right
    elif isinstance(operator, (cst.GreaterThan, cst.GreaterThanEqual)):
        bounded, bound = right, test.left
    else:
        return None
    return bounded if bound.deep_equals(count) else None


def _first_window_only(test: cst.BooleanOperation, count: cst.BaseExpression, counter: Optional[str]) -> bool:
    """`n <= accum and i + 1 == n` (either order, `<`, `accum >= n`, `n == 1 + i`, `i == n - 1`): together they say
    `i + 1 <= accum`, which holds only on the first window's micro-batches, whatever `n` is (`len(loader)`, a
    `steps_in_epoch` that is the loader's length or a step budget)."""
    if counter is None:
        return False
    for bounds, pins in ((test.left, test.right), (test.right, test.left)):
        bounded = _bounded_by(bounds, count)
        if bounded is None or not isinstance(pins, cst.Comparison) or len(pins.comparisons) != 1 \
                or not isinstance(pins.comparisons[0].operator, cst.Equal):
            continue
        sides = (pins.left, pins.comparisons[0].comparator)
        for value, other in (sides, sides[::-1]):
            if (_same_value(value, bounded) and _next_count(other, counter)) or \
                    (dotted_name(other) == counter and _one_less(value, bounded)):
                return True
    return False


def _one_less(expression: cst.BaseExpression, value: cst.BaseExpression) -> bool:
    """`value - 1`: `i == n - 1` pins `i + 1 == n`."""
    return isinstance(expression, cst.BinaryOperation) and isinstance(expression.operator, cst.Subtract) \
        and int_value(expression.right) == 1 and _same_value(expression.left, value)


def _same_value(a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    """The same expression, parentheses aside."""
    return a.with_changes(lpar=(), rpar=()).deep_equals(b.with_changes(lpar=(), rpar=()))


def _next_count(expression: cst.BaseExpression, counter: str) -> bool:
    """`counter + 1` (or `1 + counter`)."""
    if not isinstance(expression, cst.BinaryOperation) or not isinstance(expression.operator, cst.Add):
        return False
    return (dotted_name(expression.left) == counter and int_value(expression.right) == 1) or \
        (dotted_name(expression.right) == counter and int_value(expression.left) == 1)


def _disjuncts(test: cst.BaseExpression) -> List[cst.BaseExpression]:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return _disjuncts(test.left) + _disjuncts(test.right)
    return [test]


def _end_tests(loop: TrainingLoop, test: cst.BaseExpression, check: AccumulationCheck) -> List[cst.BaseExpression]:
    """The parts of a step's condition that may let it through at the epoch's end: not a conjunction that
    holds only in an epoch of at most one window (`len(loader) <= accum and i + 1 == len(loader)`,
    `steps_in_epoch <= accum and (i + 1) == steps_in_epoch`)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return _end_tests(loop, test.left, check) + _end_tests(loop, test.right, check)
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And) and (
            _shorter_than_window(loop, test.left, check.count) or _shorter_than_window(loop, test.right, check.count)
            or _first_window_only(test, check.count, check.counter)):
        return []
    return [test]


def _expanded(loop: TrainingLoop, expression: cst.BaseExpression, where: StepSite,
              limit: int = 8) -> List[cst.BaseExpression]:
    """`expression` and the values of the names it reads, followed back through the iteration and
    before the loop: `last_batch` -> `batch_idx == last_idx` -> `len(loader) - 1`."""
    found = [expression]
    pending = [(expression, where.point[0])]
    seen: Set[str] = set()
    while pending and len(found) < limit:
        node, at = pending.pop()
        for name in iter_names(node):
            if name in seen:
                continue
            seen.add(name)
            for definition in loop.reaching(name, at):
                if definition.kind == "start":
                    value, origin = loop.value_before_loop(name), at
                else:
                    value, origin = definition.value, definition.node
                if value is not None:
                    found.append(value)
                    pending.append((value, origin))
    return found


def _other_operands(test: cst.BaseExpression, check: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The parts of `(i + 1) % n == 0 or last_batch` besides the window check: `[last_batch]`."""
    if test is check:
        return []
    if isinstance(test, cst.BooleanOperation):
        return _other_operands(test.left, check) + _other_operands(test.right, check)
    return [test]


def _mentions_end(loop: TrainingLoop, test: cst.BaseExpression, counter: LoopCounter, at: int) -> bool:
    """The condition may name the loop's end: the length of something that is the same on every micro-batch
    (`len(loader)`, not `len(x)` of the batch), `n` in `for b in range(1, n + 1)`, or the counter compared with
    a count the code holds before the loop (`i == num_batches_per_epoch - 1`, `step + 1 >= steps_per_epoch`,
    `loader.num_batches`): the author's own test for the last micro-batch, which nothing shows to miss it. A
    literal (`step == 0`) or a value of the micro-batch's own is no end."""
    for call in calls_in(test):
        if dotted_name(call.func) == "len" and len(call.args) == 1 \
                and same_every_micro_batch(loop, call.args[0].value, at):
            return True
    if counter.name and any(_counter_against_count(loop, node, counter.name, at) for node in preorder(test)):
        return True
    iterable = counter.iterable
    if not isinstance(iterable, cst.Call) or dotted_name(iterable.func) != "range":
        return False
    stop = positional(iterable, 1) or positional(iterable, 0)
    ends = [stop] if stop is not None else []
    if isinstance(stop, cst.BinaryOperation) and isinstance(stop.operator, cst.Add) and int_value(stop.right) == 1:
        ends.append(stop.left)
    return any(contains(test, end) for end in ends)


def _counter_against_count(loop: TrainingLoop, node: cst.CSTNode, counter: str, at: int) -> bool:
    """`i == total - 1`, `i + 1 >= total`: the counter (give or take a number) tested for reaching a value that
    reads a name and is the same on every micro-batch."""
    if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1 or not isinstance(
            node.comparisons[0].operator, (cst.Equal, cst.GreaterThanEqual, cst.GreaterThan)):
        return False
    left, right = node.left, node.comparisons[0].comparator
    for mine, other in ((left, right), (right, left)):
        if _counter_term(mine, counter) and not _counter_term(other, counter) \
                and any(True for _ in iter_names(other)) and same_every_micro_batch(loop, other, at):
            return True
    return False


def _counter_term(node: cst.BaseExpression, counter: str) -> bool:
    """`i`, `i + 1`, `(i - 1)`: the counter, give or take a number."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract)):
        return (_counter_term(node.left, counter) and int_value(node.right) is not None) or (
            isinstance(node.operator, cst.Add) and _counter_term(node.right, counter) and int_value(node.left) is not None)
    return dotted_name(node) == counter


def _closes_on_last(loop: TrainingLoop, counter: LoopCounter, count: cst.BaseExpression, first: int,
                    names: ModuleNames) -> bool:
    """The condition holds on the last micro-batch: the loop's length is known from constants
    (`range(64)`, a `DataLoader` over a `TensorDataset` of known size) and lines up with the window,
    or it is a multiple of the count by construction (`range(N * updates)`)."""
    if counter.run is not None:
        return _run_lines_up(loop, counter.run, count, first, names)
    iterable = counter.iterable
    known = loop.known_value
    if first == 1 and isinstance(iterable, cst.Call) and dotted_name(iterable.func) == "range" \
            and len(iterable.args) == 1:
        stop = positional(iterable, 0)
        if isinstance(stop, cst.Name):
            stop = loop.value_before_loop(stop.value) or stop  # `total = updates * accum` before the loop
        if isinstance(stop, cst.BinaryOperation) and isinstance(stop.operator, cst.Multiply) \
                and (stop.left.deep_equals(count) or stop.right.deep_equals(count)):
            return True
    length = known_length(iterable, names, known)
    windows = loop.count_values(count)  # every value: `@pytest.mark.parametrize("accum", [1, 10])` gives two
    if length is None or not windows or min(windows) <= 0:
        return False
    return length == 0 or all((first + length - 1) % window == 0 for window in windows)


def _run_lines_up(loop: TrainingLoop, run: IgniteRun, count: cst.BaseExpression, first: int,
                   names: ModuleNames) -> bool:
    """An Ignite run of `max_epochs` × `epoch_length` iterations (`len(data)` unless given) that the window
    divides: a factor that is a multiple of the count (`epoch_length=accum * k`), or both known from constants."""
    factors = [factor for factor in (run.epochs, run.epoch_length) if factor is not None]
    if first == 1 and any(isinstance(factor, cst.BinaryOperation) and isinstance(factor.operator, cst.Multiply)
                          and (factor.left.deep_equals(count) or factor.right.deep_equals(count))
                          for factor in factors):
        return True
    epochs = int_value(run.epochs) if run.epochs is not None else 1
    length = int_value(run.epoch_length) if run.epoch_length is not None \
        else known_length(run.data, names, loop.known_value)
    windows = loop.count_values(count)
    if epochs is None or length is None or not windows or min(windows) <= 0:
        return False
    return epochs * length == 0 or all((first + epochs * length - 1) % window == 0 for window in windows)


def _whole_windows_only(loop: TrainingLoop, step: StepSite, check: AccumulationCheck) -> bool:
    """The step runs only while the window number (`i // N`) is under a bound: `window = i // update_freq;
    if window >= windows_per_epoch: continue` leaves out the micro-batches of a last, partial window.
    Not a bound that only applies sometimes: `if max_steps is not None and i // N == max_steps: break`."""
    for guard in step.guards:
        if not isinstance(guard.test, cst.Comparison):
            continue
        for part in _expanded(loop, guard.test, step):
            for node in preorder(part):
                if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.FloorDivide) \
                        and dotted_name(node.left) == check.counter and node.right.deep_equals(check.count):
                    return True
    return False


def _fate(loop: TrainingLoop, optimizer: str, check: AccumulationCheck) -> str:
    """Where the left-over gradients go: thrown away by a reset before the loop (`train_one_epoch` starting
    with `optimizer.zero_grad()`), into the next epoch's first update, or nowhere when the loop is the run.
    A window counted since the last step whose mark runs on into the next run of the loop (`last_opt_step`
    set once before the epochs) takes them into that run's first window, of the right size."""
    if _reset_before(loop, optimizer):
        return " and are thrown away by the reset before the loop"
    if loop.whole_run:
        return ": this loop is the whole run, so no later update takes them"
    running = _running_mark(check)
    if running is not None and loop.carried_into_next_run(running):
        if loop.whole_run is None:
            return (f": they are lost, or, if the loop runs again for a next epoch with `{running}` running on, "
                    f"they join its first window and only the last epoch's are lost")
        return (f": `{running}` runs on, so they join the next epoch's first window, but the last epoch's "
                f"are never applied")
    if loop.whole_run is None:
        return ": they are lost, or, if the loop runs again for a next epoch, they leak into its first update"
    return " and leak into the next epoch's first update"


def _reset_before(loop: TrainingLoop, optimizer: str) -> bool:
    """`optimizer.zero_grad()` (or the only optimizer's model's) in the statements just before the loop."""
    return loop.resets_beside(optimizer)[0]


def _running_mark(check: AccumulationCheck) -> Optional[str]:
    """What a window counted since the last step keeps between steps: `last_opt_step` of `ni - last_opt_step >=
    N`, `micro` of `micro == N`."""
    if check.since is not None:
        return check.since
    return check.counter if check.kind == "count" else None
