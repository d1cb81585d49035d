"""Shared helpers: run the real `torchlint` command in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def run_torchlint(*args: str, cwd: Path = REPO, env_extra: dict = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "torchlint", *args], cwd=str(cwd), capture_output=True, text=True, env=env,
        timeout=300,
    )


@pytest.fixture
def torchlint():
    return run_torchlint
