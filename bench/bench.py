"""torchlint next to Ruff and TorchFix on the same code: wall time, CPU time, peak memory.

Lints each corpus (by default the Python sources of the installed `torch`
package, found without importing torch) with

* torchlint cold (`--no-cache`) and warm (a filled `--cache-dir`), run as
  `python -m torchlint` by the interpreter running this script;
* Ruff with every rule (`--select ALL`);
* TorchFix with every rule (`--select ALL`), lint only; it is slow (about
  1 s per 1,000 lines), so it gets one run by default;

each run a fresh subprocess, `--runs` times, interleaved, and prints the
medians as Markdown: one row per corpus and tool, then the ratios torchlint is
judged by, then the language server's edit-to-diagnostics latency measured by
bench/lsp_latency.py.

Ruff and TorchFix live in their own virtual environment (TorchFix 0.7 pins an
old libcst), made once from bench/requirements.txt and reused. Linux only: the
memory figures come from /proc and wait4.

    python bench/bench.py                                 # the torch package
    python bench/bench.py --fetch-corpora /tmp/corpora    # + the timm and accelerate sdists
    python bench/bench.py --no-torch --runs 5 ~/src/project --json bench.json
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

BENCH_DIR = Path(__file__).resolve().parent
REQUIREMENTS = BENCH_DIR / "requirements.txt"
LSP_LATENCY = BENCH_DIR / "lsp_latency.py"
DEFAULT_TOOLS_VENV = BENCH_DIR / ".tools-venv"
# Stand-ins for huggingface/pytorch-image-models and huggingface/accelerate.
FETCHED_PACKAGES = ("timm", "accelerate")

# torchlint writes one line per finding. Ruff runs twice: exactly as the speed issue names it
# (`ruff check --select ALL --no-cache`, whose default `full` format prints a code frame per finding,
# ~200 MB for the torch package), and with one line per finding like torchlint (`concise`), which
# measures its linting alone and is the harder comparison.
TORCHLINT_ARGS = ["--no-respect-gitignore", "--exit-zero", "--output-format", "concise"]
# `--isolated`: the linted trees' own Ruff settings are not read (a repository pinning `required-version`
# stops Ruff, one with `exclude` lints less), so both tools lint the same files with their own defaults.
RUFF_FULL_ARGS = ["check", "--isolated", "--select", "ALL", "--no-cache", "--exit-zero", "-q"]
RUFF_ARGS = RUFF_FULL_ARGS + ["--output-format", "concise"]
# No `--fix`: TorchFix prints its findings (and the diffs it would apply) and writes nothing.
# It spreads files over one process per core by default (`--jobs`), which is left as is.
TORCHFIX_ARGS = ["--select", "ALL"]
TORCHFIX_SECONDS_PER_LINE = 1 / 1000  # for the warning printed before a long TorchFix run

TORCHLINT_COLD, TORCHLINT_WARM, TORCHFIX = "torchlint (cold)", "torchlint (warm)", "torchfix"
# With --name-files: every file named on the command line, as `pre-commit run --all-files` passes them.
# A named file is always checked for syntax, so CPython parses every file these runs lint.
NAMED_COLD, NAMED_WARM = "torchlint (cold, files named)", "torchlint (warm, files named)"
RUFF, RUFF_FULL = "ruff (concise)", "ruff (default output)"
# Python tools run as installed: byte code cached in __pycache__ (some sandboxes set
# PYTHONDONTWRITEBYTECODE, which would make every run compile its own sources again).
TOOL_ENVIRONMENT = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
SAMPLE_INTERVAL_S = 0.01
PSS_EVERY = 5  # samples: PSS every 50 ms, RSS every 10 ms
FIGURES = ("wall_s", "cpu_s", "peak_tree_mb", "peak_tree_pss_mb", "max_rss_mb", "peak_process_mb")  # medians in the JSON
KIB_TO_MB = 1024 / 1e6


def progress(message: str) -> None:
    """Tell the person waiting what is happening (stderr: stdout holds only the report)."""
    print(message, file=sys.stderr, flush=True)


# --- corpora -------------------------------------------------------------------------


@dataclass
class Corpus:
    """A folder of Python sources and what is in it."""

    name: str
    path: Path
    files: int = 0
    lines: int = 0
    backward_files: int = 0  # files whose text mentions `backward`

    @classmethod
    def scan(cls, name: str, path: Path) -> "Corpus":
        corpus = cls(name, path.resolve())
        for file in sorted(corpus.path.rglob("*.py")):
            try:
                data = file.read_bytes()
            except OSError:  # a folder named x.py, a broken link, no permission
                continue
            corpus.files += 1
            corpus.lines += data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
            corpus.backward_files += b"backward" in data
        return corpus


def torch_corpus() -> Optional[Corpus]:
    """The installed torch package's sources, located without importing torch."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    try:
        name = f"torch {importlib.metadata.version('torch')}"
    except importlib.metadata.PackageNotFoundError:
        name = "torch"
    return Corpus.scan(name, Path(spec.submodule_search_locations[0]))


def fetch_corpora(folder: Path) -> List[Corpus]:
    """Download the latest sdists of FETCHED_PACKAGES into `folder`, unpack them, and scan them."""
    folder.mkdir(parents=True, exist_ok=True)
    corpora = []
    for package in FETCHED_PACKAGES:
        progress(f"downloading the latest {package} sdist from PyPI")
        # A fresh folder per download: the one file in it afterwards is the latest version.
        with tempfile.TemporaryDirectory(dir=folder) as download:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                 "--dest", download, package],
                check=True, stdout=sys.stderr,
            )
            (downloaded,) = Path(download).iterdir()
            archive = folder / downloaded.name
            os.replace(downloaded, archive)
        stem = re.sub(r"\.(tar\.gz|tgz|zip)$", "", archive.name)
        version = stem.rsplit("-", 1)[-1]
        top = _unpack(archive, folder)
        progress(f"{package} {version}: {archive.name} unpacked in {top}")
        corpora.append(Corpus.scan(f"{package} {version}", top))
    return corpora


def _unpack(archive: Path, folder: Path) -> Path:
    """Unpack an sdist into `folder` (unless done before); returns its top-level folder."""
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as bundle:
            top = folder / bundle.namelist()[0].split("/")[0]
            if not top.is_dir():
                bundle.extractall(folder)
        return top
    with tarfile.open(archive) as bundle:
        top = folder / bundle.getnames()[0].split("/")[0]
        if not top.is_dir():
            if hasattr(tarfile, "data_filter"):  # Python 3.8.17+/3.11.4+: refuse links and paths out of `folder`
                bundle.extractall(folder, filter="data")
            else:
                bundle.extractall(folder)
    return top


# --- the tools -----------------------------------------------------------------------


def _pins(requirements: Path) -> Dict[str, str]:
    """`name==version` lines of a requirements file, as {name: version}."""
    pins = {}
    for line in requirements.read_text(encoding="utf-8").splitlines():
        requirement = line.split("#", 1)[0].strip()
        if "==" in requirement:
            name, version = requirement.split("==", 1)
            pins[name.strip().lower()] = version.strip()
    return pins


def venv_versions(python: Path, names: Sequence[str]) -> Dict[str, Optional[str]]:
    """The versions of `names` installed in the environment of `python` (None: not installed)."""
    script = (
        "import importlib.metadata as m, json, sys\n"
        "def version(name):\n"
        "    try:\n"
        "        return m.version(name)\n"
        "    except m.PackageNotFoundError:\n"
        "        return None\n"
        "print(json.dumps({name: version(name) for name in sys.argv[1:]}))\n"
    )
    done = subprocess.run([str(python), "-c", script, *names], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def ensure_tools_venv(venv: Path) -> None:
    """Make the Ruff + TorchFix environment from bench/requirements.txt, unless it already holds those versions."""
    pins = _pins(REQUIREMENTS)
    python = venv / "bin" / "python"
    if python.exists() and venv_versions(python, list(pins)) == pins:
        return
    if not python.exists():
        progress(f"creating {venv} for Ruff and TorchFix (once)")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, stdout=sys.stderr)
    progress(f"installing {REQUIREMENTS.relative_to(BENCH_DIR.parent)} into {venv}")
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "-r", str(REQUIREMENTS)],
                   check=True, stdout=sys.stderr)
    installed = venv_versions(python, list(pins))
    if installed != pins:
        raise SystemExit(f"error: {venv} holds {installed}, not {pins}")


def torchlint_options() -> List[str]:
    """The options `python -m torchlint --help` lists (the cache flags are new: they may be missing)."""
    done = subprocess.run([sys.executable, "-m", "torchlint", "--help"], capture_output=True, text=True, check=True)
    return sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", done.stdout)))


def machine_info(venv: Path) -> Dict[str, object]:
    """What the figures were measured on and with."""
    model = ""
    try:
        model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("model name")), "")
    except OSError:
        pass
    tools = venv_versions(venv / "bin" / "python", ["ruff", "torchfix", "libcst"])
    torchlint = subprocess.run([sys.executable, "-m", "torchlint", "--version"], capture_output=True, text=True,
                               check=True)
    return {
        "cpu": model or platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)),
        "platform": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "torchlint": torchlint.stdout.strip().removeprefix("torchlint "),
        "libcst (torchlint)": importlib.metadata.version("libcst"),
        "ruff": tools["ruff"],
        "torchfix": tools["torchfix"],
        "libcst (torchfix)": tools["libcst"],
        "tools venv": str(venv),
    }


# --- one measured run ------------------------------------------------------------------

_HAS_CHILDREN_FILES = os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")


def _task_children(pid: int) -> List[int]:
    """The children of every thread of `pid`, from /proc/PID/task/TID/children."""
    children: List[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return children
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as file:
                children.extend(int(child) for child in file.read().split())
        except OSError:
            continue
    return children


def _children_by_parent() -> Dict[int, List[int]]:
    """Every process's children, from the parent pid field of /proc/*/stat (kernels without `children` files)."""
    by_parent: Dict[int, List[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as file:
                parent = int(file.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        by_parent.setdefault(parent, []).append(int(entry))
    return by_parent


def process_tree(root: int) -> List[int]:
    """`root` and all its living descendants."""
    children_of: Callable[[int], List[int]] = _task_children
    if not _HAS_CHILDREN_FILES:
        by_parent = _children_by_parent()

        def children_of(pid: int) -> List[int]:
            return by_parent.get(pid, [])

    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children_of(pid))
    return tree


def memory_kib(pid: int, with_pss: bool = True) -> Tuple[int, int, int]:
    """(VmRSS, VmHWM, Pss) of `pid` in KiB; zeros for one gone or a zombie (Pss = VmRSS without `with_pss`).

    Pss (proportional set size) counts a page shared by n processes as 1/n in each: the pages a
    forked worker shares with its parent count once in a tree's sum, as they do in the machine's memory.
    Reading it makes the kernel walk the process's page tables, so it is sampled less often.
    """
    rss = hwm = pss = 0
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8", errors="replace") as file:
            for line in file:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
        if not with_pss:
            return rss, hwm, rss
        with open(f"/proc/{pid}/smaps_rollup", encoding="utf-8", errors="replace") as file:
            for line in file:
                if line.startswith("Pss:"):
                    pss = int(line.split()[1])
                    break
    except (OSError, ValueError):
        pass
    return rss, hwm, pss or rss


class TreeMemorySampler:
    """Samples the memory of a process tree every SAMPLE_INTERVAL_S in a thread.

    `peak_tree_kib` is the largest sum of the tree's RSS seen at one time, `peak_tree_pss_kib` the
    same in PSS (shared pages counted once); `peak_process_kib`
    the largest high-water mark (VmHWM) of one process, which catches peaks between samples.
    """

    def __init__(self, root: int, interval: float = SAMPLE_INTERVAL_S) -> None:
        self.root = root
        self.interval = interval
        self.peak_tree_kib = 0
        self.peak_tree_pss_kib = 0
        self.peak_process_kib = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="tree-rss", daemon=True)

    def __enter__(self) -> "TreeMemorySampler":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while True:
            with_pss = self.samples % PSS_EVERY == 0
            memory = [memory_kib(pid, with_pss) for pid in process_tree(self.root)]
            self.peak_tree_kib = max(self.peak_tree_kib, sum(rss for rss, _, _ in memory))
            if with_pss:
                self.peak_tree_pss_kib = max(self.peak_tree_pss_kib, sum(pss for _, _, pss in memory))
            self.peak_process_kib = max([self.peak_process_kib] + [hwm for _, hwm, _ in memory])
            self.samples += 1
            if self._stop.wait(self.interval):
                return


@dataclass
class Measurement:
    """One timed run of one command."""

    wall_s: float
    cpu_s: float  # user + system of the process and the descendants it waited for
    user_s: float
    system_s: float
    peak_tree_mb: float  # the largest summed RSS of the process and its descendants at one time
    peak_tree_pss_mb: float  # the same summed as PSS: pages shared by forked processes counted once
    max_rss_mb: float  # ru_maxrss: the largest single process (at least this script's own peak RSS: see README)
    peak_process_mb: float  # the largest VmHWM sampled: the largest single process, without that floor
    returncode: int
    timed_out: bool
    samples: int  # memory samples taken
    stdout_bytes: int
    stderr_tail: str = ""

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


def _kill_group(pgid: int, killed: threading.Event) -> None:
    killed.set()
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def measure(command: Sequence[str], cwd: Path, timeout_s: float) -> Measurement:
    """Run `command` once as a fresh process (group): time it, and sample the memory of its process tree.

    Its output goes to temporary files, never to a pipe this process would have to drain while
    timing; the end of stderr is kept to explain a failure.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        killed = threading.Event()
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                   start_new_session=True, env=TOOL_ENVIRONMENT)
        timer = threading.Timer(timeout_s, _kill_group, (process.pid, killed))
        timer.start()
        try:
            with TreeMemorySampler(process.pid) as sampler:
                _, status, usage = os.wait4(process.pid, 0)
                wall_s = time.perf_counter() - started
        except BaseException:  # Ctrl-C: leave no linter running
            _kill_group(process.pid, killed)
            process.wait()
            raise
        finally:
            timer.cancel()
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        err.seek(max(0, os.fstat(err.fileno()).st_size - 2000))
        return Measurement(
            wall_s=wall_s,
            cpu_s=usage.ru_utime + usage.ru_stime,
            user_s=usage.ru_utime,
            system_s=usage.ru_stime,
            # When its largest process peaked, the tree held at least that much: this lifts the figure
            # of runs too short for the samples to catch the tree at its peak.
            peak_tree_mb=max(sampler.peak_tree_kib, sampler.peak_process_kib) * KIB_TO_MB,
            peak_tree_pss_mb=max(sampler.peak_tree_pss_kib, sampler.peak_process_kib) * KIB_TO_MB,
            max_rss_mb=usage.ru_maxrss * KIB_TO_MB,  # KiB on Linux
            peak_process_mb=sampler.peak_process_kib * KIB_TO_MB,
            returncode=process.returncode,
            timed_out=killed.is_set() and process.returncode == -signal.SIGKILL,
            samples=sampler.samples,
            stdout_bytes=os.fstat(out.fileno()).st_size,
            stderr_tail=err.read().decode("utf-8", "replace"),
        )


# --- the runs ----------------------------------------------------------------------------


@dataclass
class Job:
    """One tool on one corpus: its command and its timed runs."""

    corpus: Corpus
    tool: str
    command: List[str]
    runs: int
    fill: bool = False  # one untimed run first (to fill torchlint's cache)
    targets: int = 1  # how many arguments at the end of `command` name what is linted (the corpus, or its files)
    fill_run: Optional[Measurement] = None
    measurements: List[Measurement] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.measurements) and all(m.ok for m in self.measurements) and \
            (self.fill_run is None or self.fill_run.ok)

    def status(self) -> str:
        runs = ([self.fill_run] if self.fill_run else []) + self.measurements
        failures = [m for m in runs if not m.ok]
        if not failures:
            return "ok"
        why = "timed out" if failures[0].timed_out else f"exit code {failures[0].returncode}"
        return f"FAILED ({why}, {len(failures)} of {len(runs)} runs)"

    def median(self, figure: str) -> float:
        return statistics.median(getattr(m, figure) for m in self.measurements)

    def shown_command(self) -> List[str]:
        """The command as the report prints it: CACHE_DIR for the cache folder, CORPUS or FILES for the targets."""
        options = self.command[:-self.targets]
        shown = ["CACHE_DIR" if previous == "--cache-dir" else part for previous, part in zip([""] + options, options)]
        return shown + (["CORPUS"] if self.targets == 1 else [f"FILES ({self.targets:,} paths)"])


def make_jobs(corpus: Corpus, args: argparse.Namespace, options: List[str], cache_root: Path) -> List[Job]:
    """The commands to time on `corpus`, in the order each round runs them."""
    path = str(corpus.path)
    torchlint = [sys.executable, "-m", "torchlint"]
    cold = ["--no-cache"] if "--no-cache" in options else []
    jobs = [Job(corpus, TORCHLINT_COLD, torchlint + cold + TORCHLINT_ARGS + [path], args.runs)]
    if "--cache-dir" in options:
        cache = tempfile.mkdtemp(prefix="cache-", dir=cache_root)
        jobs.append(Job(corpus, TORCHLINT_WARM, torchlint + ["--cache-dir", cache] + TORCHLINT_ARGS + [path],
                        args.runs, fill=True))
    if args.name_files:
        files = corpus_files(corpus)
        jobs.append(Job(corpus, NAMED_COLD, torchlint + cold + TORCHLINT_ARGS + files, args.runs, targets=len(files)))
        if "--cache-dir" in options:
            cache = tempfile.mkdtemp(prefix="cache-named-", dir=cache_root)
            jobs.append(Job(corpus, NAMED_WARM, torchlint + ["--cache-dir", cache] + TORCHLINT_ARGS + files,
                            args.runs, fill=True, targets=len(files)))
    bin_dir = args.tools_venv / "bin"
    jobs.append(Job(corpus, RUFF_FULL, [str(bin_dir / "ruff")] + RUFF_FULL_ARGS + [path], args.runs))
    jobs.append(Job(corpus, RUFF, [str(bin_dir / "ruff")] + RUFF_ARGS + [path], args.runs))
    if not args.no_torchfix and args.torchfix_runs > 0:
        jobs.append(Job(corpus, TORCHFIX, [str(bin_dir / "torchfix")] + TORCHFIX_ARGS + [path], args.torchfix_runs))
    return jobs


def corpus_files(corpus: Corpus) -> List[str]:
    """The corpus's `.py` files (those the files column counts), as paths for a command line."""
    return [str(file) for file in sorted(corpus.path.rglob("*.py")) if file.is_file()]


def _describe(measurement: Measurement) -> str:
    text = (f"{measurement.wall_s:.2f} s wall, {measurement.cpu_s:.2f} s CPU, "
            f"{measurement.peak_tree_mb:.0f} MB peak")
    if not measurement.ok:
        why = "timed out" if measurement.timed_out else f"exit code {measurement.returncode}"
        tail = "\n".join("      " + line for line in measurement.stderr_tail.strip().splitlines()[-10:])
        text += f"  FAILED ({why})" + (f"; end of stderr:\n{tail}" if tail else "")
    return text


def run_jobs(jobs: List[Job], cwd: Path, timeout_s: float) -> None:
    """Fill the caches, then time every job's runs in rounds (one run of each job per round)."""
    for job in jobs:
        if job.fill:
            job.fill_run = measure(job.command, cwd, timeout_s)
            progress(f"  {job.corpus.name} | {job.tool} | untimed run to fill the cache: {_describe(job.fill_run)}")
    for round_index in range(max(job.runs for job in jobs)):
        for job in jobs:
            if round_index >= job.runs or (job.fill_run is not None and not job.fill_run.ok):
                continue
            measurement = measure(job.command, cwd, timeout_s)
            job.measurements.append(measurement)
            progress(f"  {job.corpus.name} | {job.tool} | run {round_index + 1}/{job.runs}: {_describe(measurement)}")


# --- the language server ---------------------------------------------------------------


def lsp_latency(timeout_s: float) -> Dict[str, object]:
    """Run bench/lsp_latency.py with its defaults and read the figures it writes as JSON."""
    with tempfile.TemporaryDirectory() as folder:
        figures_path = Path(folder) / "lsp.json"
        command = [sys.executable, str(LSP_LATENCY), "--json", str(figures_path)]
        result: Dict[str, object] = {"command": command[:2], "ok": False}
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            result["error"] = f"timed out after {timeout_s:g} s"
            return result
        if done.returncode != 0 or not figures_path.exists():
            result["error"] = f"exit code {done.returncode}: " + (done.stderr.strip().splitlines() or [""])[-1]
            return result
        result.update(json.loads(figures_path.read_text(encoding="utf-8")), ok=True)
    return result


# --- the report ----------------------------------------------------------------------------


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> str:
    """A Markdown table padded to read well in a terminal too; `align` holds `l` or `r` per column."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows)]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.rjust(width) if side == "r" else cell.ljust(width)
                                 for cell, width, side in zip(cells, widths, align)) + " |"

    rule = "|" + "|".join("-" * (width + 1) + (":" if side == "r" else "-") for width, side in zip(widths, align)) + "|"
    return "\n".join([line(header), rule] + [line(row) for row in rows])


def ratios(jobs: List[Job]) -> Dict[str, Optional[float]]:
    """The figures torchlint is judged by, from the median wall times of the jobs that succeeded."""
    wall = {job.tool: job.median("wall_s") for job in jobs if job.ok}
    cold, warm, ruff, ruff_full, torchfix = (wall.get(tool) for tool in (TORCHLINT_COLD, TORCHLINT_WARM, RUFF,
                                                                          RUFF_FULL, TORCHFIX))
    return {
        "torchlint_cold_over_ruff_default_output": cold / ruff_full if cold and ruff_full else None,
        "torchlint_cold_over_ruff": cold / ruff if cold and ruff else None,
        "torchfix_over_torchlint_cold": torchfix / cold if torchfix and cold else None,
        "torchlint_warm_wall_s": warm,
        "torchlint_warm_over_cold": warm / cold if warm and cold else None,
    }


def _judged(value: Optional[float], met: bool, missing: str) -> str:
    return missing if value is None else f"{value:.2f} {'✓' if met else '✗'}"


def render_report(machine: Dict[str, object], corpora: List[Corpus], jobs: List[Job],
                  lsp: Optional[Dict[str, object]], notes: List[str]) -> str:
    """The whole report, in Markdown."""
    out = ["# torchlint vs Ruff vs TorchFix", ""]
    out += [f"- {key}: {value}" for key, value in machine.items()]
    out += ["", "## Corpora", "", markdown_table(
        ["corpus", ".py files", "lines", "files mentioning `backward`", "path"],
        [[c.name, f"{c.files:,}", f"{c.lines:,}", f"{c.backward_files:,}", str(c.path)] for c in corpora],
        "lrrrl",
    )]
    rows = []
    for job in jobs:
        if not job.measurements:
            rows.append([job.corpus.name, job.tool, f"{job.corpus.files:,}", f"{job.corpus.lines:,}", "0",
                         "", "", "", "", "", job.status()])
            continue
        rows.append([
            job.corpus.name, job.tool, f"{job.corpus.files:,}", f"{job.corpus.lines:,}", str(len(job.measurements)),
            f"{job.median('wall_s'):.2f}", f"{job.median('cpu_s'):.2f}", f"{job.median('peak_tree_pss_mb'):.0f}",
            f"{job.median('peak_tree_mb'):.0f}",
            f"{job.median('max_rss_mb'):.0f}", job.status(),
        ])
    out += ["", "## Runs (medians)", "", markdown_table(
        ["corpus", "tool", "files", "lines", "runs", "wall s", "CPU s", "peak MB (tree, PSS)", "peak MB (tree, RSS)",
         "max RSS MB (1 process)", "status"], rows, "llrrrrrrrrl")]
    ratio_rows = []
    for corpus in corpora:
        figures = ratios([job for job in jobs if job.corpus is corpus])
        tools = {job.tool for job in jobs if job.corpus is corpus}
        warm = figures["torchlint_warm_wall_s"]
        peak = max((job.median("peak_tree_pss_mb") for job in jobs if job.corpus is corpus and job.ok and
                    job.tool in (TORCHLINT_COLD, TORCHLINT_WARM)), default=None)
        ratio_rows.append([
            corpus.name,
            _judged(figures["torchlint_cold_over_ruff_default_output"],
                    (figures["torchlint_cold_over_ruff_default_output"] or 0) <= 1.0, "n/a"),
            _judged(figures["torchlint_cold_over_ruff"], (figures["torchlint_cold_over_ruff"] or 0) <= 1.0, "n/a"),
            _judged(figures["torchfix_over_torchlint_cold"], (figures["torchfix_over_torchlint_cold"] or 0) >= 30,
                    "n/a" if TORCHFIX in tools else "not run"),
            "not run" if TORCHLINT_WARM not in tools else "n/a" if warm is None else
            f"{warm:.2f} s ({figures['torchlint_warm_over_cold']:.2f} of cold)",
            "n/a" if peak is None else f"{peak:.0f} {'✓' if peak < 200 else '✗'}",
        ])
    out += ["", "## Ratios (median wall time)", "", markdown_table(
        ["corpus", "torchlint cold / ruff default output (want ≤ 1.0)", "torchlint cold / ruff concise",
         "torchfix / torchlint cold (want ≥ 30)", "torchlint warm wall", "torchlint peak MB, tree PSS (want < 200)"],
        ratio_rows, "lrrrrr")]
    if lsp is not None:
        out += ["", "## Language server: start-up, and didChange -> publishDiagnostics", ""]
        if lsp.get("ok"):
            starts = lsp.get("start_to_initialize_ms") is not None
            out.append(markdown_table(
                ["document", "start -> initialize reply ms", "start -> first publishDiagnostics ms", "edits",
                 "pause before each ms", "server debounce ms", "median ms", "p90 ms", "min ms", "max ms",
                 "in-process full lint ms"],
                [[f"{lsp['document_lines']} lines",
                  f"{lsp['start_to_initialize_ms']:.0f}" if starts else "not run",
                  f"{lsp['start_to_first_publish_ms']:.0f}" if starts else "not run",
                  str(lsp["edits"]), f"{lsp['pause_ms']:g}", f"{lsp['debounce_ms']:g}",
                  f"{lsp['median_ms']:.1f}", f"{lsp['p90_ms']:.1f}", f"{lsp['min_ms']:.1f}", f"{lsp['max_ms']:.1f}",
                  "" if lsp["lint_source_ms"] is None else f"{lsp['lint_source_ms']:.1f}"]],
                "lrrrrrrrrrr",
            ))
        else:
            out.append(f"FAILED: {lsp.get('error')}")
    commands = {}
    for job in jobs:
        commands.setdefault(job.tool, " ".join(job.shown_command()))
    out += ["", "## Commands", ""] + [f"- {tool}: `{command}`" for tool, command in commands.items()]
    if notes:
        out += ["", "## Notes", ""] + [f"- {note}" for note in notes]
    return "\n".join(out) + "\n"


def report_json(machine: Dict[str, object], corpora: List[Corpus], jobs: List[Job],
                lsp: Optional[Dict[str, object]], notes: List[str]) -> Dict[str, object]:
    """Every raw measurement (every run, the cache-filling ones too), the medians and the ratios."""

    def run(measurement: Measurement) -> Dict[str, object]:
        return dict(asdict(measurement), ok=measurement.ok)

    results = []
    for job in jobs:
        results.append({
            "corpus": job.corpus.name,
            "tool": job.tool,
            "command": job.command if job.targets == 1 else job.shown_command(),
            "status": job.status(),
            "fill_run": run(job.fill_run) if job.fill_run else None,
            "runs": [run(m) for m in job.measurements],
            "median": {figure: job.median(figure) for figure in FIGURES}
            if job.measurements else None,
        })
    return {
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine,
        "corpora": [dict(asdict(corpus), path=str(corpus.path)) for corpus in corpora],
        "results": results,
        "ratios": {corpus.name: ratios([job for job in jobs if job.corpus is corpus]) for corpus in corpora},
        "lsp": lsp,
        "notes": notes,
    }


# --- main ------------------------------------------------------------------------------------


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpora", nargs="*", type=Path, metavar="FOLDER", help="more folders to lint")
    parser.add_argument("--no-torch", action="store_true", help="skip the installed torch package")
    parser.add_argument("--fetch-corpora", type=Path, metavar="DIR",
                        help=f"download and unpack the latest {' and '.join(FETCHED_PACKAGES)} sdists into DIR "
                             "and lint them too")
    parser.add_argument("--runs", type=int, default=3, metavar="N", help="timed runs per tool and corpus (default: 3)")
    parser.add_argument("--torchfix-runs", type=int, default=1, metavar="N", help="timed TorchFix runs per corpus (default: 1)")
    parser.add_argument("--no-torchfix", action="store_true", help="skip TorchFix")
    parser.add_argument("--no-lsp", action="store_true", help="skip the language server latency")
    parser.add_argument("--name-files", action="store_true",
                        help="also time torchlint given every file on its command line, as `pre-commit run "
                             "--all-files` does (a named file is always checked for syntax)")
    parser.add_argument("--tools-venv", type=Path, default=DEFAULT_TOOLS_VENV, metavar="PATH",
                        help="virtual environment for Ruff and TorchFix, made if needed "
                             "(default: bench/.tools-venv)")
    parser.add_argument("--timeout", type=float, default=3600, metavar="S",
                        help="seconds before one run is killed and counted as failed (default: 3600)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="write every measurement to PATH")
    args = parser.parse_args(argv)
    if not sys.platform.startswith("linux"):
        parser.error("Linux only: the memory figures are read from /proc")
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    for folder in args.corpora:
        if not folder.is_dir():
            parser.error(f"{folder}: not a folder")
    if args.no_torch and not args.corpora and not args.fetch_corpora:
        parser.error("nothing to lint: give folders, or --fetch-corpora DIR, or leave out --no-torch")
    args.tools_venv = args.tools_venv.absolute()

    ensure_tools_venv(args.tools_venv)
    notes: List[str] = []
    options = torchlint_options()
    for flag, what in (("--no-cache", "cold runs may read a cache that earlier runs filled"),
                       ("--cache-dir", "no warm runs")):
        if flag not in options:
            notes.append(f"`python -m torchlint --help` does not list `{flag}` yet: {what}.")
            progress(f"note: {notes[-1]}")
    corpora = []
    if not args.no_torch:
        torch = torch_corpus()
        if torch is None:
            notes.append("torch is not installed in this environment: no torch corpus.")
        else:
            corpora.append(torch)
    corpora += [Corpus.scan(folder.resolve().name, folder) for folder in args.corpora]
    if args.fetch_corpora:
        corpora += fetch_corpora(args.fetch_corpora.absolute())
    if not corpora:
        parser.error("nothing to lint: torch is not installed here; give folders or --fetch-corpora DIR")
    machine = machine_info(args.tools_venv)
    notes.append("Every tool runs with its default parallelism (Ruff: threads on every core; TorchFix: one process "
                 "per core; torchlint: its `--jobs` default). CPU s adds up the work done on all cores.")

    jobs: List[Job] = []
    with tempfile.TemporaryDirectory(prefix="torchlint-bench-") as scratch:
        scratch_path = Path(scratch)  # the tools' working folder, and torchlint's warm caches
        for corpus in corpora:
            progress(f"{corpus.name}: {corpus.files:,} files, {corpus.lines:,} lines ({corpus.path})")
            corpus_jobs = make_jobs(corpus, args, options, scratch_path)
            if any(job.tool == TORCHFIX for job in corpus_jobs):
                minutes = corpus.lines * TORCHFIX_SECONDS_PER_LINE / 60
                if minutes >= 1:
                    progress(f"  TorchFix will take about {minutes:.0f} min per run (--no-torchfix skips it)")
            run_jobs(corpus_jobs, scratch_path, args.timeout)
            jobs += corpus_jobs

    lsp = None
    if not args.no_lsp:
        progress("language server: bench/lsp_latency.py (20 edits on ~1,000 lines)")
        lsp = lsp_latency(args.timeout)

    for corpus in corpora:
        warm_over_cold = ratios([job for job in jobs if job.corpus is corpus])["torchlint_warm_over_cold"]
        if warm_over_cold is not None and warm_over_cold > 0.8:
            notes.append(f"{corpus.name}: the warm runs were hardly faster than the cold ones. The cache is keyed by "
                         "torchlint's own sources: were they edited while the bench ran?")
    sys.stdout.write(render_report(machine, corpora, jobs, lsp, notes))
    if args.json:
        args.json.write_text(json.dumps(report_json(machine, corpora, jobs, lsp, notes), indent=2) + "\n",
                             encoding="utf-8")
        progress(f"wrote {args.json}")
    failed = any(not job.ok for job in jobs) or (lsp is not None and not lsp.get("ok"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
