"""The pre-commit hook, run for real: `pre-commit try-repo <this repo> torchlint --all-files`."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ACCUMULATION_BUG, REPO

BUGGY = ACCUMULATION_BUG
FIXED = BUGGY.replace("    loss.backward()\n", "    loss = loss / accum\n    loss.backward()\n")


def _git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t"})


def _try_repo(project, home, *extra):
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "torchlint", "--all-files", *extra],
        cwd=project, capture_output=True, text=True, timeout=900,
        env={**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1"},
    )


def test_hook_fails_on_a_bug_and_passes_once_fixed(tmp_path):
    pytest.importorskip("pre_commit")
    project = tmp_path / "project"
    project.mkdir()
    _git("init", "-q", cwd=project)
    (project / "train.py").write_text(BUGGY)
    _git("add", "train.py", cwd=project)
    failing = _try_repo(project, tmp_path / "pre-commit-home")
    output = failing.stdout + failing.stderr
    if "An unexpected error has occurred" in output and "install" in output.lower():
        pytest.skip(f"pre-commit could not build the hook environment (offline?): {output[-500:]}")
    assert failing.returncode == 1, output
    assert "train.py:3:5: TL003" in output
    (project / "train.py").write_text(FIXED)
    _git("add", "train.py", cwd=project)
    passing = _try_repo(project, tmp_path / "pre-commit-home")
    assert passing.returncode == 0, passing.stdout + passing.stderr


def test_hook_definition_matches_the_documented_shape():
    text = (REPO / ".pre-commit-hooks.yaml").read_text()
    assert "- id: torchlint" in text and "entry: torchlint" in text
    assert "types_or: [python, jupyter]" in text
