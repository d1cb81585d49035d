"""The relay pool (torchlint.runner._Relay): same outcomes as a serial run, whoever screens a job,
whatever a worker does; no worker left behind."""

from __future__ import annotations

import importlib
import multiprocessing
import os
import sys
import time

import pytest

from conftest import ACCUMULATION_BUG, REPO, with_big_module_loop
from torchlint import engine, runner
from torchlint.registry import RULE_NAMES

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the relay forks: Linux only")

CODES = tuple(code for code, _ in RULE_NAMES)


def jobs() -> list:
    texts = {path.name: path.read_text(encoding="utf-8") for path in sorted((REPO / "examples").glob("*.py"))}
    texts["victim.py"] = ACCUMULATION_BUG
    texts["no_loop.py"] = "import torch\n\nx = torch.zeros(3).grad\n"
    texts["broken.py"] = "for batch in data:\n    loss.backward(\n"
    return [(index, name, text, CODES, None) for index, (name, text) in enumerate(texts.items())]


def relayed(workers: int = 2) -> dict:
    return {job[1]: outcome for job, outcome in runner._Relay(workers).analyse(jobs())}


def slow_first_worker(monkeypatch) -> None:
    """The first worker takes a second longer to import LibCST: the main process screens every job meanwhile."""

    def slow_import(name):
        time.sleep(1.0)
        return importlib.import_module(name)

    monkeypatch.setattr(runner, "importlib", type("Slow", (), {"import_module": staticmethod(slow_import)}))


@pytest.fixture(scope="module")
def serial() -> dict:
    return {job[1]: runner._analyse(job) for job in jobs()}


def test_jobs_taken_by_warm_workers_give_the_serial_outcomes(serial):
    got = relayed()
    assert got == serial
    assert any(diagnostics for diagnostics, *_ in got.values())


def test_jobs_screened_here_while_the_first_worker_imports_give_the_serial_outcomes(serial, monkeypatch):
    screened = []
    real_screen = runner.screen

    def screen(text, path):
        screened.append(path)
        return real_screen(text, path)

    monkeypatch.setattr(runner, "screen", screen)
    slow_first_worker(monkeypatch)
    assert relayed() == serial
    assert sorted(screened) == sorted(serial)


@pytest.mark.parametrize("mishap", ["dies", "raises"])
def test_a_job_a_worker_does_not_answer_is_analysed_here(serial, monkeypatch, mishap):
    main = os.getpid()
    real_analyse = runner._analyse

    def analyse_job(job, *args):  # every job a worker analyses, screened here or not, goes through it
        if os.getpid() != main and job[1] == "victim.py":
            if mishap == "dies":
                os._exit(3)
            raise RuntimeError("worker trouble")
        return real_analyse(job, *args)

    monkeypatch.setattr(runner, "_analyse", analyse_job)
    assert relayed() == serial


def test_stopping_early_leaves_no_worker_behind():
    outcomes = runner._Relay(2).analyse(jobs())
    next(outcomes)
    outcomes.close()
    deadline = time.monotonic() + 30
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert multiprocessing.active_children() == []


def big_job(index: int) -> tuple:
    return (index, "big.py", with_big_module_loop(ACCUMULATION_BUG), CODES, None)


@pytest.mark.parametrize("screened_here", [False, True], ids=["by a worker", "here"])
def test_a_file_with_over_200_kb_of_code_to_parse_is_analysed_alone_after_the_workers(monkeypatch, screened_here):
    if screened_here:
        slow_first_worker(monkeypatch)
    work = jobs() + [big_job(len(jobs()))]
    assert engine.screen(work[-1][2], "big.py").parse_size > runner.BIG_FILE_CHARS
    relayed_outcomes = {job[1]: outcome for job, outcome in runner._Relay(2).analyse(work)}
    handed_back = relayed_outcomes["big.py"]  # with what screening it made: its own process does not screen it again
    assert isinstance(handed_back, runner._Deferred) and handed_back.screened.parse_size > runner.BIG_FILE_CHARS
    everything = {job[1]: outcome for job, outcome in runner._analyse_all(work, 2, runner._Relay(2))}
    assert everything == {job[1]: runner._analyse(job) for job in work}
    assert everything["big.py"][0]  # its findings


@pytest.mark.parametrize("when", ["importing", "warm"])
def test_a_relay_no_file_needed_is_abandoned_without_leftovers(when):
    relay = runner._Relay(2)
    if when == "warm":
        deadline = time.monotonic() + 30
        while not relay._warm() and time.monotonic() < deadline:
            time.sleep(0.01)
    relay.abandon()
    deadline = time.monotonic() + 30
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert multiprocessing.active_children() == []


def test_screening_a_file_with_a_training_loop_never_imports_libcst():
    """The main process screens jobs while the first worker imports LibCST: it must not import it too."""
    import subprocess

    probe = ("import sys; sys.modules['libcst'] = None\n"
             "from torchlint.engine import Screened, screen\n"
             f"screened = screen({ACCUMULATION_BUG!r}, 'train.py')\n"
             "assert isinstance(screened, Screened) and 'backward' in screened.program, screened\n")
    result = subprocess.run([sys.executable, "-c", probe], cwd=str(REPO), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_a_run_stopped_while_files_are_still_read_leaves_no_worker_behind(tmp_path, monkeypatch):
    """Jobs go to the workers as soon as their file is read (`lint_files`): an error, or Ctrl-C, while later
    files are read must still let the workers go, not leave them waiting for jobs."""
    for number in range(6):
        (tmp_path / f"train_{number}.py").write_text(ACCUMULATION_BUG)
    real_read = runner.read_source
    read = []

    def read_source(path):
        read.append(path)
        if len(read) == 4:
            raise KeyboardInterrupt
        return real_read(path)

    monkeypatch.setattr(runner, "read_source", read_source)
    tasks = [runner.Task(path, CODES, walked=True) for path in sorted(tmp_path.glob("*.py"))]
    relay = runner.start_relay(2)  # held, as the command holds it: its pipes stay open
    with pytest.raises(KeyboardInterrupt):
        runner.lint_files(tasks, jobs=2, relay=relay)
    assert read and relay.sent, "no job was handed over before the error"
    deadline = time.monotonic() + 30
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert multiprocessing.active_children() == []


def test_the_workers_analyse_the_first_files_while_the_walk_finds_the_others(tmp_path):
    """On a cold run the command hands `lint_files` the walk itself: each file goes to the workers as soon as it
    is found and read, and the results still come back one per file, in the walk's order."""
    for number in range(4):
        (tmp_path / f"train_{number}.py").write_text(ACCUMULATION_BUG)
    relay = runner.start_relay(2)
    handed_while_walking = []

    def walk():
        for path in sorted(tmp_path.glob("*.py")):
            handed_while_walking.append(len(relay.sent))
            yield runner.Task(path, CODES, walked=True)

    results = runner.lint_files(walk(), jobs=2, relay=relay)
    assert handed_while_walking == [0, 1, 2, 3]
    assert [os.path.basename(result.path) for result in results] == [f"train_{n}.py" for n in range(4)]
    assert all(any(d.code == "TL003" for d in result.diagnostics) for result in results)
