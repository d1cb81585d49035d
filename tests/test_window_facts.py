"""Window facts: what a rescaling of the gradients divides by, what a schedule's horizon counts, and the origin of
the loss a window sums."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.names import ModuleNames
from torchlint.training.loop import find_training_loops

_CODE = cst.Module(body=[])


def _loop(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    (loop,) = find_training_loops(module, ModuleNames(module))
    return loop


@pytest.mark.parametrize("rescale, divisor, constant", [
    ("for p in model.parameters(): p.grad.div_(accum)", "accum", True),
    ("for p in model.parameters(): p.grad /= 4", "4", True),
    ("for p in model.parameters(): p.grad.mul_(1 / tokens)", "tokens", False),
    ("scale_grads(model, 1 / tokens)", "tokens", False),
    ("normalise(model, cfg.accum)", "cfg.accum", True),
])
def test_the_divisor_of_a_gradient_rescaling(rescale, divisor, constant):
    loop = _loop(f"""
        def normalise(model, count):
            for p in model.parameters():
                p.grad /= count

        tokens = 0
        for i, (x, y) in enumerate(loader):
            tokens += y.numel()
            criterion(model(x), y).backward()
            if (i + 1) % accum == 0:
                {rescale}
                opt.step()
                opt.zero_grad()
    """)
    (scaling,) = loop.scalings
    assert _CODE.code_for_node(loop.gradient_divisor(scaling)) == divisor
    assert loop.divides_by_constant(scaling) is constant
    (step,) = loop.optimizer_steps
    check = loop.accumulation_check(step)
    assert (loop.gradients_divided(step, check) is not None) == constant
    assert (loop.gradients_normalised(step) is not None) != constant


@pytest.mark.parametrize("construction, counts", [
    ("CosineAnnealingLR(opt, T_max=len(loader) * epochs)", "micro-batches"),
    ("CosineAnnealingLR(opt, len(loader) // accum * epochs)", "updates"),
    ("OneCycleLR(opt, max_lr=0.1, epochs=epochs, steps_per_epoch=len(loader))", "micro-batches"),
    ("OneCycleLR(opt, max_lr=0.1, epochs=epochs, steps_per_epoch=math.ceil(len(loader) / accum))", "updates"),
    ("CosineAnnealingLR(opt, T_max=total_updates)", None),
    ("LambdaLR(opt, lambda s: 1.0)", None),
])
def test_what_a_schedule_horizon_counts(construction, counts):
    loop = _loop(f"""
        import math
        from torch.optim.lr_scheduler import CosineAnnealingLR, LambdaLR, OneCycleLR
        sched = {construction}
        for i, (x, y) in enumerate(loader):
            (criterion(model(x), y) / accum).backward()
            sched.step()
            if (i + 1) % accum == 0:
                opt.step()
                opt.zero_grad()
    """)
    (scheduler,) = loop.scheduler_steps
    (step,) = loop.optimizer_steps
    assert loop.schedule_counts(scheduler, loop.accumulation_check(step)) == counts


def _inner_window(source: str):
    """The window of the one training loop of `source` that is a loop of its own (None if none is)."""
    module = cst.parse_module(textwrap.dedent(source))
    windows = [loop.inner_window for loop in find_training_loops(module, ModuleNames(module))]
    found = [window for window in windows if window is not None]
    assert len(found) <= 1
    return found[0] if found else None


@pytest.mark.parametrize("header, body, count", [
    ("for _ in range(grad_accum):", "x, y = next(batches)", "`grad_accum`"),
    ("for micro in range(0, grad_accum):", "x, y = next(batches)", "`grad_accum`"),
    ("for i in range(1, accum + 1):", "model.require_backward_grad_sync = i == accum; x, y = next(batches)", "`accum`"),
    ("for m in range(n):", "x, y = xs[m * b:(m + 1) * b], ys[m * b:(m + 1) * b]", "`n`"),
    ("for _ in range(n):", "x, y, _ = next(batches)", "`n`"),
    ("for m in range(n):", "x, y = xs[m], ys[m]", None),
    ("for s in range(0, len(xs), b):", "x, y = xs[s:s + b], ys[s:s + b]", "`ceil(len(xs) / b)`"),
    ("for x, y in zip(xs.chunk(k), ys.chunk(k)):", "pass", "`k`"),
    ("for x, y in pieces:", "pass", "`ceil(len(xs) / b)`"),
    # Iterations that differ otherwise: the parts of one objective, not micro-batches.
    ("for t in range(n_tasks):", "x, y = next(iterators[t])", None),
    ("for x, y in loader:", "pass", None),
    ("for _ in range(1):", "x, y = next(batches)", None),
    ("for _ in range(ACCUM):", "x, y = next(batches)", None),
])
def test_an_inner_loop_is_a_window_of_the_micro_batches_its_header_counts(header, body, count):
    window = _inner_window(f"""
        ACCUM = 1
        def train(model, optimizer, batches, xs, ys, loader):
            pieces = list(zip(xs.split(b), ys.split(b)))
            for step in range(steps):
                {header}
                    {body}
                    criterion(model(x), y).backward()
                optimizer.step()
                optimizer.zero_grad()
    """)
    assert (window.count.describe(_CODE.code_for_node) if window is not None else None) == count


_WINDOW_THEN = """\
def train(model, optimizer, opt, scaler, scheduler, batches):
    for step in range(steps):
        for _ in range(accum):
            x, y = next(batches)
            criterion(model(x), y).backward()
{inside}
{after}
"""


@pytest.mark.parametrize("after, stepped, alone", [
    ("optimizer.step()", "optimizer", True),
    ("clip_grad_norm_(model.parameters(), 1.0)\noptimizer.step()", "optimizer", True),
    ("if scaler is not None:\n    scaler.step(opt)\n    scaler.update()\nelse:\n    opt.step()", "opt", False),
    # A reset, a backward or an exit before the step, a step on some paths only, a step in another loop.
    ("optimizer.zero_grad()\noptimizer.step()", None, False),
    ("criterion(model(x), y).backward()\noptimizer.step()", None, False),
    ("if finite:\n    optimizer.step()", None, False),
    ("if not finite:\n    continue\noptimizer.step()", None, False),
    ("for _ in range(2):\n    optimizer.step()", None, False),
    ("scheduler.step()", None, False),
])
def test_the_step_that_closes_an_inner_window(after, stepped, alone):
    window = _inner_window(_WINDOW_THEN.format(inside="", after=textwrap.indent(after, " " * 8)))
    assert (window.optimizer if window is not None else None) == stepped
    assert (window is not None and window.step_alone) == alone


@pytest.mark.parametrize("inside", ["optimizer.step()", "if done:\n    break"])
def test_an_inner_loop_that_steps_or_breaks_is_no_window(inside):
    source = _WINDOW_THEN.format(inside=textwrap.indent(inside, " " * 12), after="        optimizer.step()")
    assert _inner_window(source) is None


def test_gradients_rescaled_between_an_inner_window_and_its_step():
    after = "for p in model.parameters():\n    p.grad /= accum\noptimizer.step()"
    window = _inner_window(_WINDOW_THEN.format(inside="", after=textwrap.indent(after, " " * 8)))
    assert window is not None and window.rescaled


INNER_WINDOW_LOGGED = """\
import torch
import torch.nn.functional as F

model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
accum = 4
for step in range(10):
    optimizer.zero_grad()
    for micro in range(accum):
        x, y = torch.randn(8, 4), torch.randn(8, 1)
        loss = F.mse_loss(model(x), y)
        loss.backward()
    print(step, loss.item())
    optimizer.step()
"""


def test_an_inner_windows_fix_leaves_the_loss_it_logs_after_the_window_undivided():
    """`loss = loss / accum` would also divide what `print(loss.item())` after the inner loop shows: the fix
    divides the backward's argument instead (as for a loss read again in an outer window)."""
    from torchlint.engine import lint_source
    from torchlint.fix import apply_edits
    from torchlint.rules import ALL_RULES

    diagnostics, _ = lint_source(INNER_WINDOW_LOGGED, "train.py", ALL_RULES)
    (finding,) = [d for d in diagnostics if d.code == "TL003"]
    fixed = apply_edits(INNER_WINDOW_LOGGED, finding.fix.edits)
    assert "        (loss / accum).backward()\n" in fixed
    assert "loss = loss / accum" not in fixed


@pytest.mark.parametrize("condition, count", [
    ("ni - last_opt_step >= accumulate", "accumulate"),
    ("ni - last_opt_step > accumulate - 1", "accumulate"),
    ("ni - last_opt_step > 3", "4"),
    ("last_opt_step + accumulate <= ni", "accumulate"),
    ("ni >= accumulate + last_opt_step", "accumulate"),
    ("accumulate <= ni - last_opt_step", "accumulate"),
    ("gap >= accumulate", "accumulate"),
])
def test_a_window_counted_since_the_last_step(condition, count):
    loop = _loop(f"""
        last_opt_step = -1
        for epoch in range(epochs):
            for i, (x, y) in enumerate(loader):
                ni = i + nb * epoch
                criterion(model(x), y).backward()
                gap = ni - last_opt_step
                if {condition}:
                    opt.step()
                    opt.zero_grad()
                    last_opt_step = ni
    """)
    (step,) = loop.optimizer_steps
    check = loop.accumulation_check(step)
    assert check is not None and check.kind == "since"
    assert (check.counter, check.since, check.stamp) == ("i", "last_opt_step", "ni")
    assert _CODE.code_for_node(check.count) == count


@pytest.mark.parametrize("variation", [
    "",  # the mark never moves: a threshold, not a window
    "last_opt_step = ni - 1",  # set to something else than the counter
])
def test_no_window_counted_since_a_mark_the_step_does_not_set_to_the_counter(variation):
    loop = _loop(f"""
        last_opt_step = -1
        for i, (x, y) in enumerate(loader):
            ni = i + offset
            criterion(model(x), y).backward()
            if ni - last_opt_step >= accumulate:
                opt.step()
                opt.zero_grad()
                {variation or "pass"}
    """)
    (step,) = loop.optimizer_steps
    assert loop.accumulation_check(step) is None


def test_a_window_counted_since_the_last_step_needs_a_counter_that_advances_by_one():
    loop = _loop("""
        last = -1
        for i, (x, y) in enumerate(loader):
            seen = i * 2
            criterion(model(x), y).backward()
            if seen - last >= accumulate:
                opt.step()
                opt.zero_grad()
                last = seen
    """)
    (step,) = loop.optimizer_steps
    assert loop.accumulation_check(step) is None


def test_no_window_counted_since_a_mark_set_on_every_micro_batch():
    loop = _loop("""
        last = -1
        for i, (x, y) in enumerate(loader):
            criterion(model(x), y).backward()
            if i - last >= accumulate:
                opt.step()
                opt.zero_grad()
            last = i
    """)
    (step,) = loop.optimizer_steps
    assert loop.accumulation_check(step) is None


_GENERATOR_LOOP = """
def batches(loader, accum_steps, log_every=10):
{generator}

for meta, batch in batches(loader, accum_steps=args.accum):
    loss = criterion(model(batch), batch)
    loss.backward()
    if {condition}:
        opt.step()
        opt.zero_grad()
"""

_YIELDS_INDEX = """
    micro = 0
    for batch in loader:
        yield {"index": micro % accum_steps, "micro": micro}, batch
        micro += 1
"""


@pytest.mark.parametrize("generator, condition, count, remainder", [
    (_YIELDS_INDEX, 'meta["index"] == args.accum - 1', "args.accum", "last"),
    (_YIELDS_INDEX, 'meta["index"] + 1 == args.accum', "args.accum", "last"),
    (_YIELDS_INDEX, 'meta["index"] == 0', "args.accum", "zero"),
    # through a name the dict is held in, under a resume threshold on the counter
    ("""
    micro = 0
    for batch in loader:
        meta = {"index": micro % accum_steps}
        if micro >= start:
            yield meta, batch
        micro = micro + 1
""", 'meta["index"] == args.accum - 1', "args.accum", "last"),
    # the index itself, an element of the yielded tuple
    ("""
    micro = 0
    for batch in loader:
        yield micro % accum_steps, batch
        micro += 1
""", "meta == args.accum - 1", "args.accum", "last"),
])
def test_a_window_index_a_generator_of_the_file_yields(generator, condition, count, remainder):
    loop = _loop(_GENERATOR_LOOP.format(generator=textwrap.indent(textwrap.dedent(generator), "    "),
                                        condition=condition))
    (step,) = loop.optimizer_steps
    check = loop.accumulation_check(step)
    assert check is not None
    assert (_CODE.code_for_node(check.count), check.remainder, check.counter) == (count, remainder, None)


@pytest.mark.parametrize("generator, condition", [
    # the index cycles modulo another count than the one the condition tests
    (_YIELDS_INDEX, 'meta["index"] == args.log_every - 1'),
    # a key that is not the remainder
    (_YIELDS_INDEX, 'meta["micro"] == args.accum - 1'),
    # a tuple element that is not the remainder
    ("""
    micro = 0
    for batch in loader:
        yield micro // accum_steps, batch
        micro += 1
""", "meta == args.accum - 1"),
    # the generator yields from several places
    ("""
    micro = 0
    for batch in loader:
        yield {"index": micro % accum_steps}, batch
        micro += 1
    yield {"index": 0}, None
""", 'meta["index"] == args.accum - 1'),
    # the remainder of a count that does not move once per yield (a task's number)
    ("""
    for task, part in enumerate(loader):
        for batch in part:
            yield {"index": task % accum_steps}, batch
""", 'meta["index"] == args.accum - 1'),
    # a `continue` skips the count on some iterations
    ("""
    micro = 0
    for batch in loader:
        if batch is None:
            continue
        yield {"index": micro % accum_steps}, batch
        micro += 1
""", 'meta["index"] == args.accum - 1'),
    # the yield sits under a condition that is not a threshold on the count
    ("""
    micro = 0
    for batch in loader:
        if len(batch) > 1:
            yield {"index": micro % accum_steps}, batch
        micro += 1
""", 'meta["index"] == args.accum - 1'),
    # the yield sits under a condition nested in the threshold
    ("""
    micro = 0
    for batch in loader:
        if micro >= start:
            if len(batch) > 1:
                yield {"index": micro % accum_steps}, batch
        micro += 1
""", 'meta["index"] == args.accum - 1'),
    # the dict is changed after it is built
    ("""
    micro = 0
    for batch in loader:
        meta = {"index": micro % accum_steps}
        meta["index"] = 0
        yield meta, batch
        micro += 1
""", 'meta["index"] == args.accum - 1'),
    # the divisor is rebound in the generator
    ("""
    micro = 0
    accum_steps = max(accum_steps, 2)
    for batch in loader:
        yield {"index": micro % accum_steps}, batch
        micro += 1
""", 'meta["index"] == args.accum - 1'),
])
def test_a_generator_index_the_file_does_not_show_cycling_is_no_window(generator, condition):
    loop = _loop(_GENERATOR_LOOP.format(generator=textwrap.indent(textwrap.dedent(generator), "    "),
                                        condition=condition))
    (step,) = loop.optimizer_steps
    assert loop.accumulation_check(step) is None


def test_a_window_index_held_in_a_name_is_a_window():
    loop = _loop("""
        for step, (x, y) in enumerate(loader):
            slot = step % accum
            criterion(model(x), y).backward()
            if slot == accum - 1:
                opt.step()
                opt.zero_grad()
    """)
    (step,) = loop.optimizer_steps
    check = loop.accumulation_check(step)
    assert (_CODE.code_for_node(check.count), check.remainder) == ("accum", "last")


@pytest.mark.parametrize("returned, count", [
    ("step % n", "accum"),
    ("step // n", None),  # not a remainder
    ("step % 4", None),  # a remainder of no parameter: the call says nothing of its count
])
def test_a_window_index_a_function_of_the_file_returns(returned, count):
    loop = _loop(f"""
        def window_slot(step, n):
            return {returned}

        for step, (x, y) in enumerate(loader):
            slot = window_slot(step, accum)
            criterion(model(x), y).backward()
            if slot == accum - 1:
                opt.step()
                opt.zero_grad()
    """)
    (step,) = loop.optimizer_steps
    check = loop.accumulation_check(step)
    assert (_CODE.code_for_node(check.count) if check is not None else None) == count


@pytest.mark.parametrize("change", ['meta["index"] = 0', 'meta.update(index=0)', 'del meta["index"]',
                                    'reset_index(meta)'])
def test_a_generator_index_the_loop_changes_is_no_window(change):
    loop = _loop(_GENERATOR_LOOP.format(generator=textwrap.indent(textwrap.dedent(_YIELDS_INDEX), "    "),
                                        condition='meta["index"] == args.accum - 1').replace(
        "    loss = criterion", f"    if batch is None:\n        {change}\n    loss = criterion"))
    (step,) = loop.optimizer_steps
    assert loop.accumulation_check(step) is None


def test_a_generator_the_file_defines_twice_gives_no_window():
    loop = _loop("""
        if fast:
            def batches(loader, accum_steps):
                for batch in loader:
                    yield {"index": 0}, batch
        else:
            def batches(loader, accum_steps):
                micro = 0
                for batch in loader:
                    yield {"index": micro % accum_steps}, batch
                    micro += 1

        for meta, batch in batches(loader, args.accum):
            criterion(model(batch), batch).backward()
            if meta["index"] == args.accum - 1:
                opt.step()
                opt.zero_grad()
    """)
    (step,) = loop.optimizer_steps
    assert loop.accumulation_check(step) is None


def _counter(source: str, name: str):
    module = cst.parse_module(textwrap.dedent(source))
    loops = find_training_loops(module, ModuleNames(module))
    return next((c for loop in loops for c in loop.counters if c.name == name), None)


_WORKSPACE = """
    class Workspace:
        def __init__(self, model, loader, accum):
            self.model, self.loader, self.accum = model, loader, accum
            self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            self.global_step = {start}
{other}
        def run(self):
            {before}
            for x, y in self.loader:
                {first}
                (criterion(self.model(x), y) / self.accum).backward()
                if self.global_step % self.accum == 0:
                    self.optimizer.step()
                    self.optimizer.zero_grad()
                self.global_step += 1
"""


_LOAD = "        def load(self, state):\n            self.global_step = state['step']\n"


@pytest.mark.parametrize("start, other, before, first, expected, resumed", [
    ("0", "", "pass", "pass", 0, False),  # from `__init__`
    ("1", "", "pass", "pass", 1, False),
    ("0", "", "self.global_step = 5", "pass", 5, False),  # the method's own assignment wins
    ("0", "", "if resume:\n                self.global_step = ckpt['step']", "pass", 0, True),  # a fresh run's
    ("start", "", "pass", "pass", None, False),  # from an argument
    # another method writes it back from saved state: a resume, whose fresh run starts where `__init__` says
    ("0", _LOAD, "pass", "pass", 0, True),
    ("0", _LOAD, "if resume:\n                self.load(ckpt)", "pass", 0, True),
    ("0", "        def load(self, state):\n            for k, v in state.items():\n                setattr(self, k, v)\n"
          "        def resume(self, path):\n            self.load(torch.load(path))\n",
     "if args.resume:\n                self.resume(args.resume)", "pass", 0, True),
    # ... but not when every run restores it, or the loop does
    ("0", _LOAD, "self.load(ckpt)", "pass", None, False),
    ("0", _LOAD, "pass", "self.load(ckpt)", None, False),
    # another method writes it otherwise: where the count starts is not known
    ("0", "        def tick(self):\n            self.global_step += 1\n", "pass", "self.tick()", None, False),
    ("0", "        def skip(self):\n            self.global_step = 1\n", "pass", "pass", None, False),
])
def test_an_attribute_counters_start_is_the_one_its_class_gives_it(start, other, before, first, expected, resumed):
    counter = _counter(_WORKSPACE.format(start=start, other=other, before=before, first=first), "self.global_step")
    assert counter is not None and counter.start == expected
    assert counter.resumed is resumed


@pytest.mark.parametrize("guard, counts", [
    ("if not is_last:", True),  # `is_last = i == len(loader) - 1`: every micro-batch but the last
    ("if i != len(loader) - 1:", True),
    ("if i + 1 != len(loader):", True),
    ("if is_last:\n            pass\n        else:", True),
    ("if is_last:", False),  # only on the last
    ("if torch.isfinite(loss):", False),  # on any number of them
    ("if i != last:", False),  # `last` changes in the loop
])
def test_a_counter_bumped_on_every_micro_batch_but_one_still_counts_them(guard, counts):
    source = f"""
    step = 0
    last = 3
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accum
        loss.backward()
        if step % accum == 0:
            opt.step()
            opt.zero_grad()
        is_last = i == len(loader) - 1
        last = last + 1
        {guard}
            step += 1
    """
    counter = _counter(source, "step")
    assert (counter is not None and counter.start == 0) is counts


@pytest.mark.parametrize("branch, window", [
    # a counter of the windows, bumped where each one closes: every `log_every`-th window steps
    ("if (i + 1) % accum == 0:\n    updates += 1\n    if updates % log_every == 0:\n"
     "        opt.step()\n        opt.zero_grad()", "accum * log_every"),
    # ... read before it is bumped, the step comes on the first window: not a window count
    ("if (i + 1) % accum == 0:\n    if updates % log_every == 0:\n"
     "        opt.step()\n        opt.zero_grad()\n    updates += 1", None),
    # a further condition of the step's own, one the backward does not share: the window is not `accum`
    ("if (i + 1) % accum == 0:\n    if x.sum() > 0:\n        updates += 1\n    if updates % log_every == 0:\n"
     "        opt.step()\n        opt.zero_grad()", None),
    ("if (i + 1) % accum == 0:\n    if ready:\n        opt.step()\n        opt.zero_grad()", None),
    ("if (i + 1) % accum == 0 and ready:\n    opt.step()\n    opt.zero_grad()", None),
    ("if (i + 1) % accum != 0 or not ready:\n    continue\nopt.step()\nopt.zero_grad()", None),
    ("if not ((i + 1) % accum == 0 and ready):\n    continue\nopt.step()\nopt.zero_grad()", None),
    ("if ready:\n    if (i + 1) % accum == 0:\n        opt.step()\n        opt.zero_grad()", None),
    ("if (i + 1) % accum == 0:\n    if i % 3 == 0:\n        opt.step()\n        opt.zero_grad()", None),
    # conditions that hold on every window boundary: the window is `accum`
    ("if (i + 1) % accum == 0:\n    if opt is not None:\n        opt.step()\n        opt.zero_grad()", "accum"),
    ("if (i + 1) % accum == 0 and args.train:\n    opt.step()\n    opt.zero_grad()", "accum"),
    ("if (i + 1) % accum == 0 or ready:\n    opt.step()\n    opt.zero_grad()", "accum"),
    # a threshold on the window's counter holds on every boundary from some count on
    ("if (i + 1) % accum == 0 and i > warmup:\n    opt.step()\n    opt.zero_grad()", "accum"),
    ("if (i + 1) % accum == 0 and i > updates:\n    opt.step()\n    opt.zero_grad()\n    updates += 1", None),
    ("if (i + 1) % accum == 0:\n    if (i + 1) % accum == 0:\n        opt.step()\n        opt.zero_grad()", "accum"),
    # a window of one micro-batch around a window: the inner one is the step's
    ("if (i + 1) % 1 == 0:\n    if (i + 1) % accum == 0:\n        opt.step()\n        opt.zero_grad()", "accum"),
    # the inner condition on the same counter at a multiple of the count: the step's window is the wider
    ("if (i + 1) % accum == 0:\n    if (i + 1) % (2 * accum) == 0:\n        opt.step()\n        opt.zero_grad()",
     "(2 * accum)"),
    ("if i % 4 == 0:\n    if i % 8 == 0:\n        opt.step()\n        opt.zero_grad()", "8"),
])
def test_the_window_of_a_step_under_a_further_condition(branch, window):
    body = textwrap.indent(branch, " " * 12)
    loop = _loop(f"""
        updates = 0
        for i, (x, y) in enumerate(loader):
            ready = torch.isfinite(x).all()
            criterion(model(x), y).backward()
{body}
    """)
    (step,) = loop.optimizer_steps
    check = loop.accumulation_check(step)
    assert (None if check is None else _CODE.code_for_node(check.count)) == window


def test_a_condition_the_backward_shares_leaves_the_window():
    loop = _loop("""
        for i, (x, y) in enumerate(loader):
            if x is None:
                continue
            criterion(model(x), y).backward()
            if (i + 1) % accum == 0:
                opt.step()
                opt.zero_grad()
    """)
    (step,) = loop.optimizer_steps
    assert _CODE.code_for_node(loop.accumulation_check(step).count) == "accum"


@pytest.mark.parametrize("where, known", [
    ("def train(model, opt, loader, config):", None),  # the parameter's own attribute, not the module's
    ("def train(model, opt, loader):", 1),  # the module's `config`
])
def test_a_count_read_from_an_attribute_is_the_modules_only_for_the_modules_object(where, known):
    loop = _loop(f"""
        config = load()
        if viz:
            config.accum = 1

        {where}
            accum = config.accum
            for i, (x, y) in enumerate(loader):
                (model(x).loss / accum).backward()
                if (i + 1) % accum == 0:
                    opt.step()
                    opt.zero_grad()
        """)
    assert loop.count_value(cst.Name("accum")) == known


def test_a_methods_own_attribute_keeps_the_value_its_class_sets():
    loop = _loop("""
        class Runner:
            def __init__(self):
                self.accum = 4

            def epoch(self, model, opt, loader):
                for i, x in enumerate(loader):
                    (model(x).loss / self.accum).backward()
                    if (i + 1) % self.accum == 0:
                        opt.step()
                        opt.zero_grad()
        """)
    assert loop.count_value(cst.parse_expression("self.accum")) == 4


@pytest.mark.parametrize("step, each", [
    ("for optimizer in self.optimizers:\n    optimizer.step()", True),
    ("optimizer.step()", True),
    ("for _ in range(2):\n    optimizer.step()", False),  # not a walk over the optimizers
    ("for optimizer in self.optimizers:\n    (loss * 0).backward()\n    optimizer.step()", False),  # trains
])
def test_a_step_in_a_loop_over_its_optimizers_is_level_with_the_training_loop(step, each):
    source = ("def epoch(self, loader):\n"
              "    for i, x in enumerate(loader):\n"
              "        loss = self.model(x).loss\n"
              "        loss.backward()\n"
              "        if (i + 1) % 4 == 0:\n"
              + textwrap.indent(step, " " * 12) + "\n"
              "            optimizer.zero_grad()\n")
    module = cst.parse_module(source)
    loop = find_training_loops(module, ModuleNames(module))[0]  # the loop over the loader
    (stepped,) = [s for s in loop.steps if s.receiver == "optimizer"]
    assert loop.steps_each_walked(stepped) is each


@pytest.mark.parametrize("before", [
    "model.zero_grad()\n    with tqdm(total=n) as pbar:",  # before the `with` that holds the loop
    "with tqdm(total=n) as pbar:\n        model.zero_grad()",  # before the loop in the `with`
])
def test_a_reset_before_a_with_holding_the_loop_is_beside_it(before):
    loop = _loop(f"""
def epoch(model, optimizer, loader, n):
    {before}
        for i, x in enumerate(loader):
            model(x).loss.backward()
            if (i + 1) % 4 == 0:
                optimizer.step()
                optimizer.zero_grad()
""")
    assert loop.resets_beside("optimizer") == (True, False)


@pytest.mark.parametrize("tail, known", [
    # The step skipped on a NaN norm, the window's reset outside that skip: the window is still `accum`.
    ("if math.isnan(norm):\n    print('skip')\nelse:\n    opt.step()\nopt.zero_grad()", True),
    # The reset skipped too: a skipped window's gradients run on into the next, whose size the code does not say.
    ("if not math.isnan(norm):\n    opt.step()\n    opt.zero_grad()", False),
    ("if norm < 10:\n    opt.step()", False),  # no reset after the step at all
])
def test_a_condition_that_only_skips_the_step_leaves_the_window_known(tail, known):
    source = ("import math\n"
              "def train(model, opt, loader, accum, ready):\n"
              "    for i, x in enumerate(loader):\n"
              "        (model(x).loss / accum).backward()\n"
              "        if (i + 1) % accum == 0:\n"
              "            norm = clip(model)\n"
              + textwrap.indent(tail, " " * 12) + "\n")
    loop = _loop(source)
    (step,) = loop.window_steps
    assert bool(loop.accumulation_checks(step)) is known


@pytest.mark.parametrize("before_loop, window", [
    ("", "accum * log_every"),  # both counters start again in each epoch
    ("        pass\n", None),  # `updates` runs on from epoch to epoch while `i` starts again: windows drift
])
def test_a_window_counter_lines_up_with_the_micro_batch_counter_only_when_both_start_again(before_loop, window):
    reset = "        updates = 0\n" if not before_loop else before_loop
    source = ("updates = 0\n"
              "for epoch in range(epochs):\n"
              + reset +
              "    for i, (x, y) in enumerate(loader):\n"
              "        criterion(model(x), y).backward()\n"
              "        if (i + 1) % accum == 0:\n"
              "            updates += 1\n"
              "            if updates % log_every == 0:\n"
              "                opt.step()\n"
              "                opt.zero_grad()\n")
    source = source.replace("\n        updates = 0\n", "\n    updates = 0\n").replace("\n        pass\n", "\n    pass\n")
    loop = _loop(source)
    (step,) = loop.optimizer_steps
    check = loop.accumulation_check(step)
    assert (None if check is None else _CODE.code_for_node(check.count)) == window


_IGNITE = """
    import torch
    from ignite.engine import Engine, Events
    from ignite.handlers import ModelCheckpoint

    def train(model, loader, accum):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

        def update(engine, batch):
            model(batch).mean().backward()
            if engine.state.iteration % accum == 0:
                optimizer.step()
                optimizer.zero_grad()

        trainer = Engine(update)
        {attach}
        trainer.run(loader, max_epochs=3)
"""


@pytest.mark.parametrize("attach, flushed", [
    ("pass", False),
    ("trainer.add_event_handler(Events.EPOCH_COMPLETED, ModelCheckpoint('out', 'ckpt'), {'model': model})", False),
    ("trainer.add_event_handler(Events.EPOCH_COMPLETED, lambda _: print(trainer.state.epoch))", False),
    ("trainer.add_event_handler(Events.COMPLETED, lambda _: optimizer.step())", True),
    ("trainer.add_event_handler(Events.COMPLETED, finish)", None),
    ("setup(trainer)", None),
])
def test_ignite_iteration_counts_the_whole_run_and_what_may_step_after_it(attach, flushed):
    loop = _loop(_IGNITE.replace("{attach}", attach))
    counter = loop.counter("engine.state.iteration")
    assert counter is not None and counter.start == 1 and counter.run is not None
    assert counter.run.engine == "trainer" and _CODE.code_for_node(counter.run.epochs) == "3"
    assert counter.run.epoch_length is None and _CODE.code_for_node(counter.run.data) == "loader"
    assert counter.run.may_flush() is flushed


def test_ignite_engine_without_a_run_in_the_file_counts_nothing():
    loop = _loop(_IGNITE.replace("{attach}", "pass").replace("        trainer.run(loader, max_epochs=3)\n",
                                                            "        return trainer\n"))
    assert loop.counter("engine.state.iteration") is None


_TRAINER_SUBCLASS = """
    from transformers import Trainer, Seq2SeqTrainer
    from mylib import Mixin

    class Local(Trainer):
        {override}

    class Mine({bases}):
        def train(self, loader):
            for step, inputs in enumerate(loader):
                self.training_step(self.model, inputs)
"""


@pytest.mark.parametrize("bases, override, runs", [
    ("Trainer", "pass", "framework"),
    ("Seq2SeqTrainer", "pass", "framework"),
    ("Local", "pass", "framework"),
    ("Local", "def training_step(self, model, inputs): return model(**inputs).loss", "file"),
    ("Mixin, Trainer", "pass", None),
    ("Mixin", "pass", None),
])
def test_the_training_step_a_trainer_subclass_inherits_is_hugging_faces_unless_overridden(bases, override, runs):
    from torchlint.training.calls import Functions
    from torchlint.walk import preorder

    source = textwrap.dedent(_TRAINER_SUBCLASS).replace("{bases}", bases).replace("{override}", override)
    module = cst.parse_module(source)
    functions = Functions(module, ModuleNames(module))
    train = next(node for node in preorder(module) if isinstance(node, cst.FunctionDef) and node.name.value == "train")
    call = next(node for node in preorder(train) if isinstance(node, cst.Call)
                and isinstance(node.func, cst.Attribute) and node.func.attr.value == "training_step")
    callee = functions.callee(call, train)
    framework = functions.framework_module
    found = None if callee is None else "framework" if framework is not None and callee is framework.method(
        "training_step") else "file"
    assert found == runs
    assert functions.has_work(call, train) == (runs == "framework")


_RUNS = """
import torch


def inner(model, loader, optimizer, accum):
    for i, x in enumerate(loader):
        (model(x).mean() / accum).backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()


def train(model, loader, optimizer, accum):
    inner(model, loader, optimizer, accum)


{caller}
"""


@pytest.mark.parametrize("caller, whole", [
    ('if __name__ == "__main__":\n    train(None, [], None, 4)', True),  # train runs once, inner once through it
    ('def main():\n    train(None, [], None, 4)\n\n\nmain()', True),
    ('def main():\n    for epoch in range(3):\n        train(None, [], None, 4)\n\n\nmain()', False),
    ('def main():\n    train(None, [], None, 4)', None),  # main is not called here: another file may, once an epoch
    ('', None),
])
def test_a_loop_is_the_whole_run_only_when_every_function_that_calls_its_own_runs_once(caller, whole):
    loop = _loop(_RUNS.format(caller=caller))
    assert loop.function.name.value == "inner"
    assert loop.whole_run is whole


_LOGGER = """
import time


class MetricLogger:
    def log_every(self, iterable, print_freq, header=None):
        start = time.time()
        for obj in iterable:
            {body}
        print(header, time.time() - start)


def train(model, loader, optimizer, accum, iters):
    metric_logger = MetricLogger()
    loader = iter(loader)
    for i in metric_logger.log_every(range(iters), 50):
        (model(next(loader)).mean() / accum).backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
"""


@pytest.mark.parametrize("body, counts", [
    ("yield obj", True),
    ("print(obj)\n            yield obj", True),
    ("if obj is None:\n                continue\n            yield obj", False),  # skips some
    ("yield obj\n            yield obj", False),  # hands each twice
    ("yield obj\n            if obj > 10:\n                break", False),  # may stop early
    ("yield [obj]", False),  # hands on something else
])
def test_a_generator_of_the_file_that_hands_on_each_element_keeps_the_loops_counter(body, counts):
    loop = _loop(_LOGGER.format(body=body))
    counter = loop.counter("i")
    assert (counter is not None and counter.source == "range" and counter.start == 0) is counts


def test_a_loss_built_from_names_read_again_and_again_is_traced_once_per_name(monkeypatch):
    """`t5` reads `t4` twice, which reads `t3` twice...: every path from the backward to the criterion is a path to
    trace (2 ** 5 of them), but a name's origin, traced once with nothing cut short, is given again."""
    from torchlint.training import origin

    terms = "".join(f"        t{i} = t{i - 1} + t{i - 1}\n" for i in range(1, 6))
    module = cst.parse_module(
        "import torch.nn as nn\n"
        "criterion = nn.CrossEntropyLoss()\n"
        "def train(model, optimizer, loader, accum):\n"
        "    for i, (x, y) in enumerate(loader):\n"
        "        t0 = criterion(model(x), y)\n"
        f"{terms}"
        "        t5.backward()\n"
        "        if (i + 1) % accum == 0:\n"
        "            optimizer.step()\n"
        "            optimizer.zero_grad()\n"
    )
    names = ModuleNames(module)
    (loop,) = find_training_loops(module, names)
    (backward,) = loop.backwards
    traced = []
    trace = origin.OriginTracer.trace
    monkeypatch.setattr(origin.OriginTracer, "trace", lambda self, *args: traced.append(args) or trace(self, *args))
    found = loop.origin(backward.loss, backward, names)
    assert found.is_mean and not found.divided and found.sources == ("criterion",)
    assert len(traced) < 40  # without the answers given again: 126
