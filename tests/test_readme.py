"""The README says what torchlint does: its sample output, its install commands, its editor snippets."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import REPO, tomllib

README = (REPO / "README.md").read_text(encoding="utf-8")


def fenced(language: str) -> list:
    """The README's fenced code blocks in `language`, each with the paragraph line just before it."""
    return [(match.group(1), match.group(2))
            for match in re.finditer(r"([^\n]*)\n+```" + language + r"\n(.*?)```", README, re.DOTALL)]


def test_the_sample_output_is_what_torchlint_prints(torchlint):
    sample = fenced("text")[0][1]
    result = torchlint("examples/finetune_accumulation.py")
    assert result.stdout.startswith(sample), result.stdout


def test_the_readme_test_command_is_the_one_ci_runs_and_pins_only_torch():
    install_and_test = fenced("bash")[1][1].strip()
    assert install_and_test == 'python -m pip install torch==2.13.0 -e ".[test]" && python -m pytest'
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert install_and_test in ci.splitlines()


def test_torch_is_a_test_dependency_only_and_any_torch_2_build_satisfies_it():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not [requirement for requirement in project["dependencies"] if requirement.startswith("torch")]
    assert [r for r in project["optional-dependencies"]["test"] if r.startswith("torch")] == ["torch>=2.0"]
    assert "any recent CPU or CUDA build of torch 2 will do" in " ".join(README.split())


def test_the_linter_never_imports_torch(tmp_path):
    blocked = ("import sys, runpy; sys.modules['torch'] = None; sys.argv[0] = 'torchlint'; "
               "runpy.run_module('torchlint', run_name='__main__')")
    result = subprocess.run([sys.executable, "-c", blocked, "examples", "--no-cache", "--output-format", "concise"],
                            cwd=str(REPO), capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stderr
    assert "Found 12 problems" in result.stdout  # the twelve bugs of examples/, one each
