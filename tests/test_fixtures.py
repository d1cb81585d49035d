"""Runnable fixtures prove every torchlint fix (RULES.md, "What exact means").

Each `fixtures/TL00N/` folder holds a tiny deterministic training script,
`reference.py`, and one or more `buggy*.py` copies carrying the bug rule
TL00N flags, and the modules they import, if any (a `buggy*.py` whose step
runs in a loss scaler of another module, `loss_scaler.py`: a fix is checked
with them beside it). Two comments in a buggy file drive these tests:

* `# expect: TL00N` at the end of each line torchlint must report, and no other;
* a header line `# observe: ...` saying how the bug shows at run time:
  - `# observe: raises <text>`: the script dies with a RuntimeError containing <text>;
  - `# observe: weights`: its final weights differ from the reference's;
  - `# observe: <key>`: the JSON field <key> differs from the reference's.

Every script prints one JSON line, `{"weights": [...], ...}`. For every buggy
file, on CPU and (when available) CUDA, the tests check that torchlint reports
exactly the expected lines, that the bug is observable, and that the file
`torchlint --fix` writes trains exactly like the reference; for a report-only
rule (no fix, e.g. TL011), that no fix is offered and `--fix` changes nothing.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
BUGGY = sorted(FIXTURES.glob("TL*/buggy*.py"))
REFERENCES = sorted(FIXTURES.glob("TL*/reference.py"))
SCRIPT_SERVER = Path(__file__).resolve().parent / "script_server.py"

TIMEOUT_S = 120
WORKERS = max(2, os.cpu_count() or 1)  # scripts run this many at a time (most of each is importing torch)
DIFFERS_ABOVE = 1e-6  # max abs weight difference that counts as "trains differently"
ATOL, RTOL = 1e-9, 1e-7  # float64: the fixed script must reproduce the reference this closely

# Under pytest-xdist every test here runs in one worker: the session starts all the script runs its tests need.
pytestmark = pytest.mark.xdist_group("fixture-scripts")

EXPECT = re.compile(r"#\s*expect:\s*(TL\d{3}(?:\s*,\s*TL\d{3})*)\s*$")
OBSERVE = re.compile(r"^#\s*observe:\s*(\S+)(?:\s+(.+?))?\s*$", re.MULTILINE)


def fixture_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


# --- reading the fixtures ---------------------------------------------------------


def helpers_of(path: Path) -> list:
    """The other modules of a fixture's folder (neither `buggy*.py` nor `reference.py`): what its scripts import,
    a step that runs in another file of the project (`loss_scaler.py`)."""
    return [other for other in sorted(path.parent.glob("*.py"))
            if not other.name.startswith("buggy") and other.name != "reference.py"]


def expected_findings(path: Path) -> set:
    """{(line, code)} from the `# expect:` comments."""
    expected = set()
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        match = EXPECT.search(text)
        if match:
            expected.update((number, code.strip()) for code in match.group(1).split(","))
    return expected


def observation(path: Path):
    """(what, detail) from the `# observe:` header: ("raises", text), ("weights", None) or (key, None)."""
    matches = OBSERVE.findall(path.read_text())
    assert len(matches) == 1, f"{fixture_id(path)} needs exactly one `# observe:` header line"
    what, detail = matches[0]
    if what == "raises":
        assert detail, f"{fixture_id(path)}: `# observe: raises` needs the error text"
    return what, detail or None


# --- running torchlint and the scripts -------------------------------------------------


def torchlint(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "torchlint", *map(str, args)],
        cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S,
    )


def lint_json(*paths: Path, cwd: Path) -> list:
    proc = torchlint("--output-format", "json", *paths, cwd=cwd)
    assert proc.returncode in (0, 1), f"torchlint exited {proc.returncode}:\n{proc.stderr}"
    return json.loads(proc.stdout)


@functools.lru_cache(maxsize=None)
def findings_by_file() -> dict:
    """Fixture file (as named, relative to fixtures/) -> torchlint's JSON findings in it: one run over every
    buggy and reference script, as `torchlint fixtures/` or pre-commit would lint them (once per session; a
    file's findings never depend on the other files named with it)."""
    named = [str(path.relative_to(FIXTURES)) for path in (*BUGGY, *REFERENCES)]
    found: dict = {name: [] for name in named}
    for finding in lint_json(*named, cwd=FIXTURES):
        found[finding["path"]].append(finding)
    return found


def findings_of(path: Path) -> tuple:
    """torchlint's JSON findings for a fixture file."""
    return tuple(findings_by_file()[str(path.relative_to(FIXTURES))])


@functools.lru_cache(maxsize=None)
def rule_is_fixable(code: str) -> bool:
    """Whether the catalogue says rule `code` offers a fix."""
    from torchlint.rules import ALL_RULES

    (rule,) = [rule for rule in ALL_RULES if rule.code == code]
    return rule.fixable()


def run_script(path: Path, device: str, cwd: Path) -> subprocess.CompletedProcess:
    """`python PATH --device DEVICE`, run in `cwd`: forked from a server that has imported torch already
    (tests/script_server.py), where processes fork; else a fresh interpreter. A script that starts processes
    of its own (`torch.multiprocessing.spawn` for DDP) always gets a fresh interpreter: spawning gloo workers
    from a fork of a process that imported torch aborted once on a 2-core CI machine."""
    args = [str(path), "--device", device]
    if not hasattr(os, "fork") or "spawn(" in path.read_text(encoding="utf-8"):
        return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S)
    server = _SERVERS.get()
    try:
        server.stdin.write(json.dumps({"path": str(path), "args": args[1:], "cwd": str(cwd), "timeout": TIMEOUT_S})
                           + "\n")
        server.stdin.flush()
        answer = json.loads(server.stdout.readline())
    finally:
        _SERVERS.put(server)
    return subprocess.CompletedProcess([sys.executable, *args], answer["returncode"], answer["stdout"],
                                       answer["stderr"])


class _Servers:
    """WORKERS script servers, started when first asked for, each serving one run at a time."""

    def __init__(self) -> None:
        self.free: "queue.Queue[subprocess.Popen]" = queue.Queue()
        self.started: list = []
        self.lock = threading.Lock()

    def get(self) -> subprocess.Popen:
        with self.lock:
            if len(self.started) < WORKERS and self.free.empty():
                server = subprocess.Popen([sys.executable, str(SCRIPT_SERVER)], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, text=True)
                self.started.append(server)
                return server
        return self.free.get()

    def put(self, server: subprocess.Popen) -> None:
        self.free.put(server)

    def close(self) -> None:
        for server in self.started:
            server.stdin.close()
            server.wait(timeout=TIMEOUT_S)


_SERVERS = _Servers()
atexit.register(_SERVERS.close)


def result_of(proc: subprocess.CompletedProcess, what: str) -> dict:
    assert proc.returncode == 0, f"{what} exited {proc.returncode}:\n{proc.stderr}"
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, f"{what} must print exactly one JSON line, printed:\n{proc.stdout}"
    result = json.loads(lines[0])
    assert isinstance(result.get("weights"), list) and result["weights"], f"{what}: no weights in {result}"
    return result


def max_abs_diff(a: list, b: list) -> float:
    assert len(a) == len(b), f"weight vectors differ in length: {len(a)} != {len(b)}"
    return max(abs(x - y) for x, y in zip(a, b))


def assert_weights_match(actual: list, expected: list) -> None:
    torch = pytest.importorskip("torch")
    assert len(actual) == len(expected), f"weight vectors differ in length: {len(actual)} != {len(expected)}"
    actual_t = torch.tensor(actual, dtype=torch.float64)
    expected_t = torch.tensor(expected, dtype=torch.float64)
    assert torch.allclose(actual_t, expected_t, atol=ATOL, rtol=RTOL), (
        f"weights differ from the reference: max abs diff {max_abs_diff(actual, expected):.3g}"
    )


# --- pytest fixtures -----------------------------------------------------------------


@pytest.fixture(params=["cpu", "cuda"])
def device(request) -> str:
    torch = pytest.importorskip("torch")
    if request.param == "cuda" and not torch.cuda.is_available():
        pytest.skip("CUDA not available: torch.cuda.is_available() is False")
    return request.param


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def scripts_needed(items) -> list:
    """(script, device) pairs the collected tests will run: each buggy script, and each reference."""
    needed = []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        buggy, device = params.get("buggy"), params.get("device")
        if buggy is None or device is None or (device == "cuda" and not cuda_available()):
            continue
        if item.originalname == "test_buggy_script_observably_differs_from_reference":
            needed.append((buggy, device))
        needed.append((buggy.parent / "reference.py", device))
    return list(dict.fromkeys(needed))


@pytest.fixture(scope="session", autouse=True)
def script_runs(request, tmp_path_factory):
    """script_runs(path, device) -> the finished run of a reference or buggy script.

    All the runs the session's tests need start with its first test, WORKERS at
    a time, in the background: each is a fresh Python importing torch, which
    costs more than the training itself.
    """
    cwd = tmp_path_factory.mktemp("scripts")
    pool = ThreadPoolExecutor(max_workers=WORKERS)
    runs = {}

    def start(path: Path, device: str):
        if (path, device) not in runs:
            runs[path, device] = pool.submit(run_script, path, device, cwd)
        return runs[path, device]

    for path, device in scripts_needed(request.session.items):
        start(path, device)
    yield lambda path, device: start(path, device).result()
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="session")
def reference(script_runs):
    """reference(folder, device) -> the reference script's JSON result, run once per (folder, device)."""

    def run(folder: Path, device: str) -> dict:
        proc = script_runs(folder / "reference.py", device)
        return result_of(proc, f"{folder.name}/reference.py --device {device}")

    return run


# --- the tests ---------------------------------------------------------------------


def test_every_fixture_folder_is_complete():
    assert BUGGY, f"no fixtures/TL*/buggy*.py found under {FIXTURES}"
    for folder in sorted({path.parent for path in BUGGY} | {path.parent for path in REFERENCES}):
        assert (folder / "reference.py").is_file(), f"{folder.name} has no reference.py"
        assert list(folder.glob("buggy*.py")), f"{folder.name} has no buggy*.py"


def test_every_fixable_rule_has_a_fixture():
    """RULES.md: every fix is checked by running it."""
    from torchlint.rules import ALL_RULES

    folders = {path.parent.name for path in BUGGY}
    missing = [rule.code for rule in ALL_RULES if rule.fixable() and rule.code not in folders]
    assert not missing, f"fixable rules without fixtures/<code>/buggy*.py: {missing}"


@pytest.mark.parametrize("path", REFERENCES, ids=fixture_id)
def test_reference_script_is_clean(path):
    assert findings_of(path) == ()


@pytest.mark.parametrize("buggy", BUGGY, ids=fixture_id)
def test_torchlint_reports_exactly_the_expected_lines(buggy):
    expected = expected_findings(buggy)
    assert expected, f"{fixture_id(buggy)} has no `# expect:` comment"
    assert all(code == buggy.parent.name for _, code in expected), "a fixture's bug belongs to its folder's rule"
    reported = {(finding["line"], finding["code"]) for finding in findings_of(buggy)}
    assert reported == expected


@pytest.mark.parametrize("buggy", BUGGY, ids=fixture_id)
def test_buggy_script_observably_differs_from_reference(buggy, device, reference, script_runs):
    what, detail = observation(buggy)
    proc = script_runs(buggy, device)
    expected = reference(buggy.parent, device)  # the reference runs, whatever the buggy copy does
    if what == "raises":
        assert proc.returncode != 0, f"expected a RuntimeError, but it ran:\n{proc.stdout}"
        assert "RuntimeError" in proc.stderr and detail in proc.stderr, proc.stderr
        return
    result = result_of(proc, f"{fixture_id(buggy)} --device {device}")
    if what == "weights":
        assert max_abs_diff(result["weights"], expected["weights"]) > DIFFERS_ABOVE, "the bug changed no weight"
    else:
        assert what in expected, f"the reference prints no `{what}`"
        assert result.get(what) != expected[what], f"`{what}` is {expected[what]!r} with and without the bug"


@pytest.mark.parametrize("buggy", BUGGY, ids=fixture_id)
def test_fixed_script_trains_like_reference(buggy, device, reference, tmp_path):
    findings = findings_of(buggy)
    assert findings, f"torchlint reports nothing in {fixture_id(buggy)}"
    copy = tmp_path / buggy.name
    shutil.copyfile(buggy, copy)
    for helper in helpers_of(buggy):  # a module the script imports (the loss scaler of an engine.py trainer)
        shutil.copyfile(helper, tmp_path / helper.name)

    if not rule_is_fixable(buggy.parent.name):  # report only: nothing to run
        assert not any(finding.get("fix") for finding in findings), "a report-only rule must offer no fix"
        flags = ["--fix", "--unsafe-fixes"]
        proc = torchlint(*flags, copy, cwd=tmp_path)
        assert proc.returncode in (0, 1), f"torchlint {' '.join(flags)} exited {proc.returncode}:\n{proc.stderr}"
        assert copy.read_text() == buggy.read_text(), f"torchlint {' '.join(flags)} changed a report-only finding"
        return

    assert all(finding.get("fix") for finding in findings), "every finding must carry a fix"
    unsafe = any(finding["fix"]["applicability"] == "unsafe" for finding in findings)
    flags = ["--fix", "--unsafe-fixes"] if unsafe else ["--fix"]

    proc = torchlint(*flags, copy, cwd=tmp_path)
    assert proc.returncode in (0, 1), f"torchlint {' '.join(flags)} exited {proc.returncode}:\n{proc.stderr}"
    fixed = copy.read_text()
    assert fixed != buggy.read_text(), f"torchlint {' '.join(flags)} changed nothing"

    again = torchlint(*flags, "--output-format", "json", copy, cwd=tmp_path)
    assert again.returncode in (0, 1), again.stderr
    assert copy.read_text() == fixed, "a second --fix changed the file again (not idempotent)"
    assert json.loads(again.stdout) == [], "findings remain after the fix"

    expected = reference(buggy.parent, device)
    result = result_of(run_script(copy, device, tmp_path), f"fixed {fixture_id(buggy)} --device {device}")
    assert_weights_match(result["weights"], expected["weights"])
    assert result.keys() == expected.keys()
    for key in expected.keys() - {"weights"}:
        assert result[key] == expected[key], f"`{key}`: fixed {result[key]!r}, reference {expected[key]!r}"
