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
