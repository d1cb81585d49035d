"""The speed-ups never change what a user sees: prefilter, loop gate, cache and process pool on or off.

Each run goes through the real command on the whole realistic corpus, the
bundled examples and the fixtures, and compares the JSON findings.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ACCUMULATION_BUG, GRAD_HELPERS, REPO, with_big_module_loop
from torchlint.engine import screen
from torchlint.registry import RULE_NAMES

FOLDERS = ["tests/corpus", "examples", "fixtures"]
# Under pytest-xdist every test here runs in one worker, which makes the reference run once.
pytestmark = pytest.mark.xdist_group("speed-modes")


def run(*args: str, env: dict, cwd: Path = REPO, python_args=()) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("TORCHLINT_")}
    environment.update(NO_COLOR="1", **env)
    return subprocess.run([sys.executable, *python_args, "-m", "torchlint", *args], cwd=str(cwd),
                          capture_output=True, text=True, env=environment, timeout=600)


def findings(result: subprocess.CompletedProcess) -> list:
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def reference() -> list:
    """Every speed-up off: no prefilter or loop gate, no cache, one process."""
    result = run(*FOLDERS, "--output-format", "json", "--no-cache", "-j", "1", env={"TORCHLINT_NO_PREFILTER": "1"})
    found = findings(result)
    assert len(found) > 100  # the corpus alone expects about that many
    return found


def test_pool_and_cache_cold_then_warm_give_the_reference_findings(reference, tmp_path):
    cache = tmp_path / "cache"
    cold = run(*FOLDERS, "--output-format", "json", "-j", "2", "--cache-dir", str(cache), env={})
    assert findings(cold) == reference
    assert list(cache.glob("results-*.json")), "the cold run wrote no cache"
    warm = run(*FOLDERS, "--output-format", "json", "-j", "2", "--cache-dir", str(cache), env={})
    assert findings(warm) == reference


def test_a_warm_run_needs_no_parser_at_all(reference, tmp_path):
    cache = tmp_path / "cache"
    run(*FOLDERS, "--output-format", "json", "--cache-dir", str(cache), env={})
    # With LibCST made unimportable, any file that missed the cache would fail the run.
    blocked = ["-c", "import sys, runpy; sys.modules['libcst'] = None; sys.argv[0] = 'torchlint'; "
                     "runpy.run_module('torchlint', run_name='__main__')"]
    environment = {key: value for key, value in os.environ.items() if not key.startswith("TORCHLINT_")}
    result = subprocess.run([sys.executable, *blocked, *FOLDERS, "--output-format", "json", "--cache-dir", str(cache)],
                            cwd=str(REPO), capture_output=True, text=True, env=environment, timeout=600)
    assert findings(result) == reference


def test_serial_in_process_run_gives_the_reference_findings(reference):
    assert findings(run(*FOLDERS, "--output-format", "json", "--no-cache", "-j", "1", env={})) == reference


def test_the_cache_is_keyed_by_the_selected_rules(tmp_path):
    cache = ["--cache-dir", str(tmp_path / "cache")]
    only = findings(run("examples", "--output-format", "json", "--select", "TL003", *cache, env={}))
    everything = findings(run("examples", "--output-format", "json", *cache, env={}))
    assert {d["code"] for d in only} == {"TL003"}
    assert {d["code"] for d in everything} == {code for code, _ in RULE_NAMES}  # examples/ carry every rule


def test_a_corrupt_or_unwritable_cache_never_fails_a_run(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    expected = findings(run("examples", "--output-format", "json", "--no-cache", env={}))
    run("examples", "--output-format", "json", "--cache-dir", str(folder), env={})
    for results in folder.glob("results-*.json"):
        results.write_text("{ not json", encoding="utf-8")
    assert findings(run("examples", "--output-format", "json", "--cache-dir", str(folder), env={})) == expected
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    result = run("examples", "--output-format", "json", "--cache-dir", str(blocker / "cache"), env={})
    assert findings(result) == expected and result.stderr == ""


def test_the_cache_folder_ignores_itself_in_git(tmp_path):
    folder = tmp_path / "project"
    shutil.copytree(REPO / "examples", folder)
    run(".", "--output-format", "concise", cwd=folder, env={})
    cache = folder / ".torchlint_cache"
    assert (cache / ".gitignore").read_text().strip().endswith("*")
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")


def test_fixing_gives_the_same_files_with_and_without_the_speed_ups(tmp_path):
    plain, fast = tmp_path / "plain", tmp_path / "fast"
    shutil.copytree(REPO / "examples", plain)
    shutil.copytree(REPO / "examples", fast)
    slow = run("--fix", "--unsafe-fixes", "--no-cache", "-j", "1", str(plain), env={"TORCHLINT_NO_PREFILTER": "1"})
    quick = run("--fix", "--unsafe-fixes", "-j", "2", "--cache-dir", str(tmp_path / "cache"), str(fast), env={})
    assert slow.returncode == quick.returncode
    assert "Fixed" in quick.stdout
    for path in sorted(plain.glob("*.py")):
        assert (fast / path.name).read_text() == path.read_text(), path.name


def test_jobs_must_be_a_whole_number():
    result = run("examples", "--jobs", "many", env={})
    assert result.returncode == 2 and "expected a whole number" in result.stderr


def test_a_file_without_training_loops_is_linted_without_importing_libcst_or_rich(tmp_path):
    (tmp_path / "data.py").write_text("import torch\n\nx = torch.zeros(3, requires_grad=True)\n")
    (tmp_path / "eval.py").write_text("def score(model, x):\n    return model(x).grad_fn is None\n")
    blocked = ["-c", "import sys, runpy; sys.modules['libcst'] = sys.modules['rich'] = None; "
                     "sys.argv[0] = 'torchlint'; runpy.run_module('torchlint', run_name='__main__')"]
    environment = {key: value for key, value in os.environ.items() if not key.startswith("TORCHLINT_")}
    result = subprocess.run([sys.executable, *blocked, "data.py", "eval.py", "--no-cache"], cwd=str(tmp_path),
                            capture_output=True, text=True, env=environment, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "All checks passed." in result.stdout


def test_big_files_handed_back_by_the_workers_give_the_same_findings(tmp_path):
    bug = (REPO / "examples" / "finetune_accumulation.py").read_text(encoding="utf-8")
    (tmp_path / "big_with_loop.py").write_text(with_big_module_loop(bug), encoding="utf-8")
    (tmp_path / "huge_without_loop.py").write_text(GRAD_HELPERS * 3, encoding="utf-8")  # over 512 KB
    for name in ("amp_trainer.py", "reset_mistakes.py", "lr_schedule.py"):
        shutil.copy(REPO / "examples" / name, tmp_path / name)
    big = (tmp_path / "big_with_loop.py").read_text(encoding="utf-8")
    assert screen(big, str(tmp_path / "big_with_loop.py")).parse_size > 200 * 1024  # handed back by a worker
    assert (tmp_path / "huge_without_loop.py").stat().st_size > 512 * 1024
    plain = findings(run(".", "--output-format", "json", "--no-cache", "-j", "1", cwd=tmp_path,
                         env={"TORCHLINT_NO_PREFILTER": "1"}))
    pooled = findings(run(".", "--output-format", "json", "--no-cache", "-j", "2", cwd=tmp_path, env={}))
    assert pooled == plain
    assert any(d["path"] == "big_with_loop.py" for d in plain)


def test_workers_started_before_the_files_are_found_are_let_go_on_a_config_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\nselect = [\n")
    (tmp_path / "train.py").write_text(ACCUMULATION_BUG)
    result = run(".", "--no-cache", "-j", "2", cwd=tmp_path, env={})
    assert result.returncode == 2
    assert "invalid TOML" in result.stderr and "Traceback" not in result.stderr


def test_a_config_error_met_after_the_walk_handed_files_to_the_workers_stops_the_run(tmp_path):
    """The walk finds files while the workers analyse the first ones: a configuration file it comes to later that
    cannot be read is an error of the whole run, as it is when found first, and no worker is left behind."""
    (tmp_path / "a_first").mkdir()
    (tmp_path / "a_first" / "train.py").write_text(ACCUMULATION_BUG)
    (tmp_path / "b_broken").mkdir()
    (tmp_path / "b_broken" / "pyproject.toml").write_text("[tool.torchlint]\nselect = [\n")
    (tmp_path / "b_broken" / "train.py").write_text(ACCUMULATION_BUG)
    result = run(".", "--no-cache", "-j", "2", cwd=tmp_path, env={})
    assert result.returncode == 2
    assert "b_broken" in result.stderr and "invalid TOML" in result.stderr and "Traceback" not in result.stderr
    assert "TL003" not in result.stdout


def test_workers_started_before_the_files_are_found_are_let_go_when_no_file_needs_them(tmp_path):
    for n in range(3):
        (tmp_path / f"data_{n}.py").write_text(f"import torch\n\nx = torch.zeros({n})\n")
    result = run(".", "--no-cache", "-j", "2", cwd=tmp_path, env={})
    assert result.returncode == 0 and result.stderr == ""
    assert "All checks passed." in result.stdout
