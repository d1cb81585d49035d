"""Lint many files: read and prefilter them here, answer from the cache, analyse the rest in parallel.

Reading, decoding, the textual prefilter and cache lookups are cheap and run
in this process, so a run whose files all fail the prefilter or hit the cache
never imports LibCST. On Linux, as soon as one file needs analysis (on a cold
run, at once), a worker is forked that imports LibCST while this process reads
on and screens files, and then forks the other workers (one per CPU by
default): see `_Relay`. Each file that needs analysis goes to them as soon as
it is read, so they analyse while this process reads and prefilters the rest.
Elsewhere the files left are analysed on a process pool when there is enough
work to repay starting it, the biggest files first, so that one of them does
not finish last. A file whose LibCST tree would take over a
hundred megabytes (over 200 KB of code to parse) is analysed alone, after the
workers, in a process of its own, so a run's memory stays that of its biggest
file. Results come back in the order of the tasks, whatever order the workers
finish in, so output never depends on scheduling.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, Union

from torchlint.cache import Cache
from torchlint.collector import collector_paused
from torchlint.engine import LintResult, Problem, Screened, UnreadableFile, checks_syntax, \
    load_program, may_train, prefiltering, read_source, screen, skipped_unparsed
from torchlint.model import Diagnostic
from torchlint.project.imports import file_stamps
from torchlint.registry import SYNTAX_ERROR

# Below this much text, and this many files, to analyse, starting workers costs more than it saves.
POOL_MIN_CHARS = 256 * 1024
POOL_MIN_FILES = 48
# On Linux, runs of this many files or more analyse on the relay (see _Relay), whatever their size.
RELAY_MIN_FILES = 2
# Files with over BIG_FILE_CHARS of code for LibCST to parse, and every file over HUGE_FILE_CHARS, are analysed
# after the workers, each in a process of its own (see _analyse_all).
BIG_FILE_CHARS = 200 * 1024
HUGE_FILE_CHARS = 512 * 1024


@dataclass(frozen=True)
class Task:
    path: Path
    codes: Tuple[str, ...]
    walked: bool = False  # found by walking a folder, not named: see `torchlint.engine.checks_syntax`


def _result(shown: str, diagnostics: list, problems, source, program) -> LintResult:
    """A file's result; its text is kept only when findings will quote it (a run holds thousands of files)."""
    if not diagnostics:
        return LintResult(shown, (), tuple(problems))
    return LintResult(shown, tuple(diagnostics), tuple(problems), source, program)


def _without_syntax_error(diagnostics: List[Diagnostic], unchecked: bool) -> List[Diagnostic]:
    """The findings, less TL000 when the file is not one whose syntax is checked (`checks_syntax`)."""
    return [d for d in diagnostics if d.code != SYNTAX_ERROR[0]] if unchecked else diagnostics


# (task index, path shown, program text, rule codes, cache key)
_Job = Tuple[int, str, str, Tuple[str, ...], Optional[str]]
# findings, problems, and the other files of the project the findings rest on: (path, size, modification time)
_Outcome = Tuple[List[Diagnostic], List[Problem], Tuple[Tuple[str, int, int], ...]]


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def start_relay(jobs: int = 0, cache: Optional[Cache] = None) -> Optional["_Relay"]:
    """Workers for a run that is about to find its files, if it is a cold one (no cache, or an empty one):
    some file will surely need LibCST, and the first worker imports it while the files are found and read.
    Hand it to `lint_files`, or `abandon()` it."""
    if _relay_workers(jobs) < 2 or not (cache is None or cache.is_empty()):
        return None
    return _Relay(_relay_workers(jobs))


def _relay_workers(jobs: int) -> int:
    """How many workers a relay would have: 0 where it cannot fork (see `_context`)."""
    return (jobs or available_cpus()) if _context() is not None else 0


def lint_files(
    tasks: Iterable[Task],
    jobs: int = 0,
    cache: Optional[Cache] = None,
    advance: Callable[[], None] = lambda: None,
    relay: Optional["_Relay"] = None,
) -> List[LintResult]:
    """One LintResult per task, in task order.

    `jobs` 0: one process per CPU, when there is enough to analyse to repay
    starting them; N: N processes whenever two files or more need analysis.
    `relay`: workers already started (`start_relay`); they are used, or let go.
    With a relay, `tasks` may be an iterator that finds them (a walk): the
    workers analyse the first files while it finds the others.
    """
    relaying = relay is not None
    if relay is None:
        tasks = tasks if isinstance(tasks, Sequence) else list(tasks)
        relaying = len(tasks) >= RELAY_MIN_FILES and _relay_workers(jobs) >= 2  # how many decides whether they pay
    taken: List[Task] = []  # the tasks so far, by index
    results: List[Optional[LintResult]] = []
    pending: List[_Job] = []
    deferred: List[Tuple[_Job, Optional[Screened]]] = []  # handed back by the relay: analysed after it
    programs: Dict[int, tuple] = {}
    projects: Dict[int, Tuple[Tuple[str, int, int], ...]] = {}  # job -> the project its cache entry rests on
    if relay is None and relaying:
        relay = start_relay(jobs, cache)

    def settle(job: _Job, outcome: Union[_Outcome, _Deferred]) -> None:
        index, shown, _, _, key = job
        if isinstance(outcome, _Deferred):
            deferred.append((job, outcome.screened))
            return
        diagnostics, problems, dependencies = outcome
        source, program = programs.pop(index)
        if cache is not None and key is not None and not problems:
            cache.put(key, diagnostics, tuple(dependencies) + projects.pop(index))
        unchecked = not checks_syntax(program.text, taken[index].walked, shown)
        diagnostics = program.to_file(_without_syntax_error(diagnostics, unchecked))
        results[index] = _result(shown, diagnostics, problems, source, program)
        advance()

    try:
        for index, task in enumerate(tasks):
            taken.append(task)
            results.append(None)
            shown = str(task.path)
            try:
                source = read_source(task.path)
                program = load_program(task.path, source, task.walked)
            except UnreadableFile as error:
                results[index] = LintResult(shown, problems=(Problem(shown, str(error), "unreadable"),))
                advance()
                continue
            # A notebook cell that does not parse was checked with the whole notebook (`load_program`): its TL000
            # stands even where the cells left hold no training loop.
            if program is None or (skipped_unparsed(program.text, task.walked, shown)
                                   and not program.cell_syntax_errors):
                results[index] = LintResult(shown)  # nothing to quote: the text is not kept
                advance()
                continue
            unchecked = not checks_syntax(program.text, task.walked, shown)  # parsed all the same: no prefilter
            key = None
            if cache is not None:
                key = cache.key(program.text, "notebook" if program.notebook is not None else "py", task.codes)
                found = cache.get(key, shown)
                if found is not None:
                    results[index] = _result(shown, program.to_file(_without_syntax_error(found, unchecked)), (),
                                             source, program)
                    advance()
                    continue
            depends = _project_dependency(shown, program.text)
            if relay is None and prefiltering() and not may_train(program.text, shown):
                # Named, so checked for syntax, but it cannot hold a training loop: CPython's parser settles it
                # here, without LibCST, unless it finds an error for LibCST to report. On a cold run the relay
                # is there already: its workers check such files too (as `screen` does, LibCST never parses them).
                with collector_paused():
                    screened = screen(program.text, shown)
                if not isinstance(screened, Screened):
                    diagnostics, problems = screened
                    if cache is not None and key is not None and not problems:
                        cache.put(key, diagnostics, depends)
                    results[index] = _result(shown, program.to_file(diagnostics), problems, source, program)
                    advance()
                    continue
            programs[index] = (source, program)
            projects[index] = depends
            job = (index, shown, program.text, task.codes, key)
            if relaying and relay is None and len(program.text) <= HUGE_FILE_CHARS:
                relay = _Relay(_relay_workers(jobs))  # its first worker imports LibCST while files are read
            if relay is not None and len(program.text) <= HUGE_FILE_CHARS:
                # to the workers at once: they analyse while this process reads on
                handed = relay.submit(job)
                if handed is not None:
                    settle(job, handed)
                for answered in relay.answered():
                    settle(*answered)
            else:
                pending.append(job)

        for job, outcome in _analyse_all(pending, jobs, relay, deferred):
            settle(job, outcome)
    finally:
        if relay is not None:
            relay.abandon()  # stopped early (an error, Ctrl-C): no worker is left waiting for jobs
    return [result for result in results if result is not None]


def _project_dependency(path: str, text: str) -> Tuple[Tuple[str, int, int], ...]:
    """What a cache entry of the file `path` rests on besides its text: for a module of a project whose text
    has a loop, the project (`torchlint.project.index.project_stamp`), stamped when the entry is stored. Its
    loops may call into any file of the project (which of them run a backward), and its findings may rest on
    the callers of its functions anywhere in it: a file created, deleted or changed there changes them."""
    if not path.endswith(".py") or ("for" not in text and "while" not in text):
        return ()
    from torchlint.project.index import project_root

    return ((project_root(path).rstrip(os.sep) + os.sep, -1, 0),)


@dataclass(frozen=True)
class _Deferred:
    """A job whose parse is over the worker's limit (`BIG_FILE_CHARS`), with what `screen` made of its text: the
    process of its own that analyses it does not screen it again."""

    screened: Screened


def _analyse(job: _Job, parse_limit: Optional[int] = None, screened: Optional[Screened] = None
             ) -> Union[_Outcome, _Deferred]:
    """The job's outcome; `_Deferred` when its text is over `parse_limit` and needs LibCST (see `lint_source`).
    `screened`: what `screen` already made of the job's text."""
    with collector_paused():
        return _analysed(job, parse_limit, screened)


def _analysed(job: _Job, parse_limit: Optional[int], screened: Optional[Screened]) -> Union[_Outcome, _Deferred]:
    from torchlint.engine import ParseDeferred, analyse

    _, shown, text, codes, _ = job
    screened = screen(text, shown) if screened is None else screened
    if not isinstance(screened, Screened):
        return (*screened, ())  # settled without LibCST, which this process need not import
    from torchlint.rules import rules_by_codes

    used: List[str] = []
    try:
        diagnostics, problems = analyse(screened, shown, rules_by_codes(codes), parse_limit=parse_limit,
                                        dependencies=used)
    except ParseDeferred:
        return _Deferred(screened)
    return diagnostics, problems, file_stamps(used)


def _analyse_all(jobs: List[_Job], processes: int, relay: Optional["_Relay"] = None,
                 deferred: Sequence[Tuple[_Job, Optional[Screened]]] = ()):
    """(job, outcome) for every job, and for those already handed to `relay` (`_Relay.submit`): on the relay, or a
    process pool when asked or when it pays, else here. `deferred`: jobs the relay handed back already."""
    # A big file's LibCST tree takes over a hundred megabytes: workers hand such files back once they
    # know a parse is needed, and they are analysed here after the workers are gone, one at a time,
    # so the memory of the whole run stays that of one big file. Huge files never go to a worker.
    huge = [job for job in jobs if len(job[2]) > HUGE_FILE_CHARS]
    small = [job for job in jobs if len(job[2]) <= HUGE_FILE_CHARS]
    deferred = list(deferred)
    if relay is not None and (small or relay.fed):
        outcomes = relay.analyse(small)
    else:
        if relay is not None:
            relay.abandon()
        workers = min(processes or available_cpus(), len(jobs))
        enough = len(jobs) >= POOL_MIN_FILES or sum(len(job[2]) for job in jobs) >= POOL_MIN_CHARS
        if workers < 2 or (not processes and not enough):
            for job in jobs:
                yield job, _analyse(job)
            return
        outcomes = _on_pool(small, workers)
    for job, outcome in outcomes:
        if isinstance(outcome, _Deferred):
            deferred.append((job, outcome.screened))
        else:
            yield job, outcome
    if deferred or huge:
        importlib.import_module("torchlint.rules")  # imported once here, inherited by each process forked below
    for job, screened in deferred + [(job, None) for job in huge]:
        yield job, _in_own_process(job, screened)


def _in_own_process(job: _Job, screened: Optional[Screened] = None) -> _Outcome:
    """Analyse one big file in a process of its own: its memory goes back to the system when it ends.
    `screened`: what `screen` already made of its text."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=_context()) as pool:
            return pool.submit(_analyse, job, None, screened).result()
    except BrokenProcessPool:
        return _analyse(job, None, screened)


def _context():
    """fork where it is safe (Linux): workers start at once and inherit what is imported."""
    import multiprocessing

    return multiprocessing.get_context("fork") if sys.platform.startswith("linux") else None


def _on_pool(jobs: List[_Job], workers: int):
    if not jobs:
        return
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    remaining = {id(job): job for job in jobs}
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=_context()) as pool:
            largest_first = sorted(jobs, key=lambda j: -len(j[2]))
            futures = {pool.submit(_analyse, job, BIG_FILE_CHARS): job for job in largest_first}
            for future in as_completed(futures):
                job = futures[future]
                outcome = future.result()
                del remaining[id(job)]
                yield job, outcome
    except BrokenProcessPool:
        # A worker died (killed for memory, say): analyse what is left here rather than lose it.
        for job in jobs:
            if id(job) in remaining:
                yield job, _analyse(job)


class _Relay:
    """Workers, forked, that share one import of LibCST and take their jobs from one queue.

    Importing LibCST and the rules takes a fifth of a second, as long as analysing a hundred
    files. The first worker is forked as soon as one file needs analysis (on a cold run,
    before the files are even found: `start_relay`), and imports them while this process
    goes on finding and reading files. Meanwhile this process screens the jobs it hands
    over (CPython's parse, the loop gate, the sparse program: `torchlint.engine.screen`, no
    LibCST); once it has imported them, the first worker forks the others, which inherit
    them, and says so. From then on jobs go to the queue whole. `lint_files` hands each job
    over as soon as it has read the file (`submit`) and takes the answers that are in
    between files (`answered`), so the workers analyse while it reads on; `analyse` hands
    over a list of jobs at once, biggest first, so that no big file is left to the end.
    Each worker answers on a pipe of its own: a worker that dies is noticed, and the jobs
    it did not answer are analysed here.
    """

    def __init__(self, workers: int) -> None:
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self.workers = workers
        self.queue = context.Queue()  # (position, shown, text, codes, program, statement_lines, facts); None each
        self.pipes = [context.Pipe(duplex=False) for _ in range(workers)]
        self.first = context.Process(target=_relay_worker, args=(self.queue, self.pipes, 0), name="torchlint-0")
        self.first.start()
        for _, writer in self.pipes:
            writer.close()
        self.warm = False
        self.used = False  # a job was handed over (`submit`, `analyse`)
        self.sent: List[_Job] = []  # by position, the number the workers answer with
        self.unanswered: Set[int] = set()  # positions in the workers' hands
        self.readers = [reader for reader, _ in self.pipes]  # of the workers not known to be gone
        self.ended = False  # told the workers no more jobs come (`_end`)
        self.finished = False  # every outcome given (`analyse`)
        self.abandoned = False

    def _warm(self) -> bool:
        """Whether the first worker has imported LibCST (or is gone)."""
        first = self.pipes[0][0]
        if not self.warm and first in self.readers and first.poll():
            try:
                first.recv()  # its first word: "warm"
            except (EOFError, OSError):  # gone: `answered` finds so too
                pass
            self.warm = True
        return self.warm

    @property
    def fed(self) -> bool:
        """Whether jobs were handed to it (`submit`) whose outcomes `analyse` has yet to give."""
        return bool(self.sent) and not self.finished

    def submit(self, job: _Job) -> Optional[Union[_Outcome, _Deferred]]:
        """Hand one job to the workers; None, or its outcome when it was settled here: screened while the first
        worker imports, it needed no LibCST, or its parse is for a process of its own (`_Deferred`)."""
        self.used = True
        position = len(self.sent)
        self.sent.append(job)
        _, shown, text, codes, _ = job
        if self._warm():
            self.queue.put((position, shown, text, codes, None, None, None, _index_facts(shown, text)))
            self.unanswered.add(position)
            return None
        with collector_paused():
            screened = screen(text, shown)  # while the first worker imports
        if not isinstance(screened, Screened):
            return (*screened, ())
        if screened.parse_size > BIG_FILE_CHARS:
            return _Deferred(screened)  # analysed after the workers, in a process of its own
        program = "" if screened.program is text else screened.program
        self.queue.put((position, shown, text, codes, program, screened.statement_lines, screened.trainers,
                        _index_facts(shown, text)))
        self.unanswered.add(position)
        return None

    def answered(self, block: bool = False) -> Iterator[Tuple[_Job, Union[_Outcome, _Deferred]]]:
        """(job, outcome) for the jobs the workers have answered; with `block`, wait until every worker is gone
        (after `_end`)."""
        from multiprocessing.connection import wait

        while self.readers:
            ready = wait(self.readers, None if block else 0)
            if not ready:
                return
            for reader in ready:
                try:
                    answer = reader.recv()
                except (EOFError, OSError):  # the worker is gone: it has answered all it will
                    self.readers.remove(reader)
                    reader.close()
                    continue
                if answer == "warm":
                    self.warm = True
                elif isinstance(answer, tuple) and answer[0] in self.unanswered:
                    self.unanswered.discard(answer[0])
                    yield self.sent[answer[0]], answer[1]

    def analyse(self, jobs: List[_Job]):
        """(job, outcome) for every job, and for those handed over before (`submit`), in the order the workers
        finish them. The jobs go biggest first, so that no big file is left to the end."""
        try:
            for job in sorted(jobs, key=lambda job: -len(job[2])):
                handed = self.submit(job)
                if handed is not None:
                    yield job, handed
            self._end()
            yield from self.answered(block=True)
            self.first.join()
            self.finished = True
        finally:
            if not self.finished:  # stopped early: the workers finish the job in hand and leave
                self.abandon()
            else:
                self.queue.close()
                self.queue.cancel_join_thread()
        for position in sorted(self.unanswered):  # what a worker that died took, or never answered
            self.unanswered.discard(position)
            yield self.sent[position], _analyse(self.sent[position])

    def _end(self) -> None:
        """Tell the workers that no more jobs come (once): they take those queued, then leave."""
        if not self.ended:
            self.ended = True
            for _ in range(self.workers):
                self.queue.put(None)

    def abandon(self) -> None:
        """Stop the workers without waiting for them: no file needed them after all, or the run stopped early
        (they finish the job in hand and leave). Nothing once `analyse` has given every outcome."""
        if self.finished or self.abandoned:
            return
        self.abandoned = True
        if not self.used and not self._warm():
            self.first.terminate()  # still importing: it has forked nobody yet
        self._end()  # no more jobs than those queued
        for reader, _ in self.pipes:  # and they learn at once that nobody listens
            reader.close()
        self.readers = []
        self.queue.close()
        self.queue.cancel_join_thread()


def _index_facts(shown: str, text: str):
    """What this process's index of the file's project says for the file (`torchlint.project.index.IndexFacts`),
    for the worker that takes it: read here once, where the prefilter indexed the project already, rather than
    again in every worker."""
    from torchlint.project.index import facts_for

    try:
        return facts_for(shown, text)
    except (OSError, RecursionError):
        return None


def _relay_worker(queue, pipes: list, me: int) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the main process, which stops the workers
    for reader, _ in pipes:
        reader.close()
    if me == 0:
        gc.disable()  # the import makes thousands of objects, none of them garbage
        try:
            importlib.import_module("torchlint.rules")
        except BaseException:  # noqa: BLE001 - the main process meets the same error and reports it
            os._exit(1)
        gc.freeze()  # the collector no longer walks what was imported, nor copies its pages in each fork
        gc.enable()
        for other in range(1, len(pipes)):
            _context().Process(target=_relay_worker, args=(queue, pipes, other), name=f"torchlint-{other}").start()
    for index, (_, writer) in enumerate(pipes):
        if index != me:
            writer.close()
    answers = pipes[me][1]
    try:
        if me == 0:
            answers.send("warm")
        while True:
            item = queue.get()
            if item is None:
                break
            position, shown, text, codes, program, statement_lines, trainers, facts = item
            screened = None if program is None else Screened(text, program or text, statement_lines, trainers)
            try:
                if facts is not None:
                    from torchlint.project.index import adopt

                    adopt(facts)
                outcome = _analyse((position, shown, text, codes, None), BIG_FILE_CHARS, screened)
            except Exception:  # noqa: BLE001 - the main process analyses it again, and reports what it raises
                continue
            answers.send((position, outcome))
    except OSError:  # the main process has stopped listening
        pass
    answers.close()
