"""Where a loop's micro-batch counter starts (`TrainingLoop.fresh_value`, `LoopCounter.start`), when a resume
restores it on some paths into the loop."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.names import ModuleNames
from torchlint.training import find_training_loops


def _counter(before: str, header: str = "for batch in loader:", name: str = "step"):
    source = "def train(loader, model, opt, args, ckpt):\n" + textwrap.indent(textwrap.dedent(before), "    ") + (
        f"    {header}\n        model(batch).backward()\n        opt.step()\n        opt.zero_grad()\n"
        f"        step += 1\n")
    module = cst.parse_module(source)
    (loop,) = find_training_loops(module, ModuleNames(module))
    return loop.counter(name)


@pytest.mark.parametrize("before, start, resumed", [
    ("step = 0\n", 0, False),
    ("step = 0\nif args.resume:\n    step = ckpt['step']\n", 0, True),  # a fresh run counts from 0
    ("step = 1\nif args.resume:\n    step = ckpt.get('step', 1) + 1\n", 1, True),
    ("step = ckpt['step'] if args.resume else 0\n", 0, True),
    ("step = 0\nif args.one_based:\n    step = 1\n", None, False),  # two constants: it depends on the run
    ("step = 0\nif args.resume:\n    step = None\n", None, False),
    ("step = ckpt['step']\n", None, False),  # no fresh path at all
])
def test_a_counter_restored_on_resume_starts_where_a_fresh_run_does(before: str, start, resumed: bool) -> None:
    counter = _counter(before)
    assert counter.start == start
    assert counter.resumed is resumed


def test_a_range_from_a_restored_start_iteration_starts_at_the_fresh_runs_value() -> None:
    counter = _counter("start_iter = 0\nif args.resume:\n    start_iter = ckpt['iteration'] + 1\n",
                       "for it in range(start_iter, args.max_iter):", "it")
    assert (counter.start, counter.resumed) == (0, True)


@pytest.mark.parametrize("before, counted", [
    ("pbar = enumerate(loader)\nif args.rank in {-1, 0}:\n    pbar = tqdm(pbar, total=len(loader))\n", "loader"),
    ("pbar = enumerate(loader)\npbar = tqdm(pbar)\n", "loader"),
    ("pbar = enumerate(loader)\nif RANK in {-1, 0}:\n    pbar = TQDM(pbar, total=nb)\n", "loader"),  # Ultralytics'
    ("pbar = enumerate(loader)\nif RANK in {-1, 0}:\n    pbar = Progress(pbar)\n", None),  # a class that may not
    # Two different iterables on two paths: no one counter.
    ("pbar = enumerate(loader)\nif args.rank in {-1, 0}:\n    pbar = tqdm(enumerate(other))\n", None),
])
def test_a_progress_bar_wrapped_on_some_paths_keeps_the_enumerate_counter(before: str, counted) -> None:
    counter = _counter(before, header="for i, batch in pbar:", name="i")
    if counted is None:
        assert counter is None
    else:
        assert counter is not None and counter.source == "enumerate" and counter.start == 0
        assert cst.Module(body=[]).code_for_node(counter.iterable) == counted


def _loop(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    (loop,) = find_training_loops(module, ModuleNames(module))
    return loop


_PACED = """
def train(loader, model, opt, args, epochs):
    for epoch in range(epochs):
{before}
        for batch in {iterable}:
            model(batch).backward()
{bump}
            if n % 4 == 0:
                opt.step()
                opt.zero_grad()
"""


@pytest.mark.parametrize("before, bump, paced", [
    ("        n = 0", "            n += 1", True),  # set again in each epoch
    ("        a, n, b = 0, 0, 0", "            n = n + 1", True),  # CodeT5's `nb_tr_examples, nb_tr_steps, ...`
    ("        pass", "            n += 1", False),  # `n` runs on from epoch to epoch (unset here: no start)
    ("        n = 0", "            if batch is not None:\n                n += 1", False),  # not every iteration
    ("        n = 0", "            n += 1\n            if n > 100:\n                n = 0", False),  # set twice
])
def test_a_manual_counter_set_before_each_run_and_bumped_every_iteration_is_paced(before, bump, paced) -> None:
    loop = _loop(_PACED.format(before=before, bump=bump, iterable="loader"))
    counter = loop.counter("n")
    assert (counter is not None and counter.paced) is paced
    if paced:
        assert counter.start == 0 and cst.Module(body=[]).code_for_node(counter.iterable) == "loader"


def test_a_counter_set_once_before_the_epochs_is_not_paced() -> None:
    loop = _loop("""
    def train(loader, model, opt, epochs):
        n = 0
        for epoch in range(epochs):
            for batch in loader:
                model(batch).backward()
                n += 1
                if n % 4 == 0:
                    opt.step()
                    opt.zero_grad()
    """)
    assert loop.counter("n").start == 0 and not loop.counter("n").paced


@pytest.mark.parametrize("iterable, walked, endless", [
    ("tqdm(loader)", "loader", False),
    ("progress_bar(range(steps), parent=mb)", "range(steps)", False),
    ("itertools.cycle(loader)", "itertools.cycle(loader)", True),
])
def test_a_paced_counter_walks_what_the_loop_walks(iterable: str, walked: str, endless: bool) -> None:
    source = "import itertools\n" + _PACED.format(before="        n = 0", bump="            n += 1", iterable=iterable)
    counter = _loop(source).counter("n")
    assert counter.paced and counter.endless is endless
    assert cst.Module(body=[]).code_for_node(counter.iterable) == walked


def test_fastprogress_bars_keep_the_range_counter() -> None:
    loop = _loop("""
    from fastprogress import progress_bar
    def train(model, opt, steps, mb):
        for i in progress_bar(range(steps), parent=mb):
            model(i).backward()
            if (i + 1) % 4 == 0:
                opt.step()
                opt.zero_grad()
    """)
    assert (loop.counter("i").source, loop.counter("i").start) == ("range", 0)
