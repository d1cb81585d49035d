"""Shared helpers: run the real `torchlint` command in a subprocess.

Every test that takes the `torchlint` fixture runs twice: once the way users
run it by default but with the cache shared by the whole test session and two
worker processes forced (`TORCHLINT_JOBS=2`), and once with every speed-up off
(no cache, no prefilter, one process). A test that passes in one mode and not
the other has found a difference the speed-ups made.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
# `[project.urls]`: where every link torchlint gives comes from (through the installed package's metadata).
PROJECT_URLS = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]

# No test writes a cache into the checkout: the session's cache lives in a temporary folder.
_SESSION_CACHE = tempfile.mkdtemp(prefix="torchlint-test-cache-")
os.environ["TORCHLINT_CACHE_DIR"] = _SESSION_CACHE

# A gradient-accumulation loop with one bug: the mean loss is not divided (TL003 at line 3, column 5).
ACCUMULATION_BUG = textwrap.dedent(
    """\
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        if (i + 1) % accum == 0 or (i + 1) == len(loader):
            optimizer.step()
            optimizer.zero_grad()
    """
)
ACCUMULATION_FIXED_LINE = "    loss = loss / accum"  # what --fix inserts before the backward

# 4,000 small functions calling `.grad(...)`, over 200 KB: the prefilter lets them through.
GRAD_HELPERS = "".join(f"def helper_{n}(x):\n    y = x * {n}\n    return y.grad(x)\n\n\n" for n in range(4000))


def with_big_module_loop(head: str) -> str:
    """`head`, GRAD_HELPERS, and a loop outside any function, in a script that names every helper: all of it is
    read with the loop (`torchlint.sparse`), over 200 KB of code for LibCST."""
    named = "HELPERS = [" + ", ".join(f"helper_{n}" for n in range(4000)) + "]\n"
    return head + "\n\n" + GRAD_HELPERS + named + "for step in range(3):\n    loss = helper_1(step)\n    loss.backward()\n"


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


MODES = {
    "pool+cache": {"TORCHLINT_JOBS": "2"},
    "serial+uncached+unfiltered": {"TORCHLINT_JOBS": "1", "TORCHLINT_NO_CACHE": "1", "TORCHLINT_NO_PREFILTER": "1"},
}


def run_torchlint(*args: str, cwd: Path = REPO, env_extra: dict = None, mode: str = "pool+cache",
                  stdin: str = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", **MODES[mode], **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "torchlint", *args], cwd=str(cwd), capture_output=True, text=True, env=env,
        timeout=300, input=stdin,
    )


def pytest_generate_tests(metafunc):
    """A test taking `torchlint` runs once per mode of MODES, or per mode its module names in `TORCHLINT_MODES`
    (what it checks does not depend on the speed-ups, which test_speed_modes compares on the whole corpus)."""
    if "torchlint" in metafunc.fixturenames:
        modes = getattr(metafunc.module, "TORCHLINT_MODES", sorted(MODES))
        metafunc.parametrize("torchlint", modes, indirect=True)


@pytest.fixture
def torchlint(request):
    def run(*args: str, **kwargs) -> subprocess.CompletedProcess:
        return run_torchlint(*args, mode=request.param, **kwargs)

    return run


def lint_findings(text: str, monkeypatch, whole: bool, path: str = "train.py") -> list:
    """(code, line, column, message) of each finding `lint_source` gives `text` in this process: with the
    screen and the sparse parse (`whole` False), or with every file parsed whole (`TORCHLINT_NO_PREFILTER`)."""
    from torchlint.engine import lint_source
    from torchlint.rules import ALL_RULES

    if whole:
        monkeypatch.setenv("TORCHLINT_NO_PREFILTER", "1")
    else:
        monkeypatch.delenv("TORCHLINT_NO_PREFILTER", raising=False)
    diagnostics, problems = lint_source(text, path, ALL_RULES)
    assert not problems
    return [(d.code, d.line, d.column, d.message) for d in diagnostics]
