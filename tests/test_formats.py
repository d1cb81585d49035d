"""Output formats for programs and CI (SARIF, GitHub), statistics, and reading from standard input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jsonschema
import pytest

from conftest import PROJECT_URLS, REPO

# Output, options and messages: the same with and without the speed-ups (test_speed_modes compares those).
TORCHLINT_MODES = ["pool+cache"]

BUG = textwrap.dedent(
    """\
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        if i % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
    optimizer.step()  # the gradients left after the last window: no TL010
    optimizer.zero_grad()
    """
)
SCHEMA = Path(__file__).parent / "sarif-2.1.0-subset.schema.json"


def test_sarif_output_validates_and_carries_rules_and_fixes(torchlint, tmp_path):
    (tmp_path / "train.py").write_text(BUG)
    result = torchlint("train.py", "--output-format", "sarif", cwd=tmp_path)
    assert result.returncode == 1
    log = json.loads(result.stdout)
    jsonschema.validate(log, json.loads(SCHEMA.read_text()))
    run = log["runs"][0]
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    assert {"TL001", "TL003", "TL012", "TL000"} <= set(rules)
    assert rules["TL003"]["helpUri"] == PROJECT_URLS["Documentation"] + "TL003.md"
    assert rules["TL000"]["helpUri"] == PROJECT_URLS["Documentation"] + "TL000.md"
    assert rules["TL000"]["help"]["markdown"].startswith("# TL000 syntax-error")
    assert run["tool"]["driver"]["informationUri"] == PROJECT_URLS["Repository"]
    assert "## Why is this bad?" in rules["TL003"]["help"]["markdown"]
    results = {r["ruleId"]: r for r in run["results"]}
    assert set(results) == {"TL003", "TL004"}
    tl003 = results["TL003"]
    assert run["tool"]["driver"]["rules"][tl003["ruleIndex"]]["id"] == "TL003"
    assert tl003["locations"][0]["physicalLocation"]["region"]["startLine"] == 3
    replacement = tl003["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement["insertedContent"]["text"] == "    loss = loss / accum\n"


def test_sarif_without_the_package_metadata_gives_no_link_rather_than_a_made_up_one(monkeypatch):
    from importlib import metadata

    from torchlint.model import Diagnostic
    from torchlint.report.sarif import render_sarif

    def no_metadata(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "metadata", no_metadata)
    finding = Diagnostic("TL003", "unscaled-accumulated-loss", "error", "m", "t.py", 3, 5, 3, 20)
    log = json.loads(render_sarif([finding], {}, False))
    jsonschema.validate(log, json.loads(SCHEMA.read_text()))
    assert "http" not in json.dumps(log["runs"])
    assert all("help" in rule for rule in log["runs"][0]["tool"]["driver"]["rules"])


def test_sarif_with_no_findings_is_a_valid_empty_run(torchlint, tmp_path):
    (tmp_path / "clean.py").write_text("print('no training here')\n")
    log = json.loads(torchlint("clean.py", "--output-format", "sarif", cwd=tmp_path).stdout)
    jsonschema.validate(log, json.loads(SCHEMA.read_text()))
    assert log["runs"][0]["results"] == []


def test_sarif_subset_schema_rejects_a_broken_log():
    log = {"version": "2.1.0", "runs": [{"tool": {"driver": {}}, "results": []}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(log, json.loads(SCHEMA.read_text()))


def test_github_format_emits_workflow_commands(torchlint, tmp_path):
    (tmp_path / "train.py").write_text(BUG)
    result = torchlint("train.py", "--output-format", "github", cwd=tmp_path)
    lines = [line for line in result.stdout.splitlines() if line.startswith("::")]
    assert lines[0].startswith("::error title=torchlint (TL003 unscaled-accumulated-loss),file=train.py,line=3,col=5,")
    assert "::TL003 `loss` is a mean" in lines[0]
    assert "%25" in lines[1]  # the `%` of `i % accum` is escaped


def test_statistics_count_per_rule(torchlint, tmp_path):
    (tmp_path / "a.py").write_text(BUG)
    (tmp_path / "b.py").write_text(BUG.replace("% accum", "% accum_steps"))
    result = torchlint(".", "--statistics", cwd=tmp_path)
    assert result.stdout.splitlines()[:2] == ["2  TL003  [*] unscaled-accumulated-loss",
                                              "2  TL004  [*] off-by-one-accumulation-step"]
    assert "Found 4 problems" in result.stdout
    as_json = json.loads(torchlint(".", "--statistics", "--output-format", "json", cwd=tmp_path).stdout)
    assert as_json[0] == {"code": "TL003", "name": "unscaled-accumulated-loss", "count": 2, "fixable": True}


def _stdin(*args, text=BUG, cwd=None):
    return subprocess.run([sys.executable, "-m", "torchlint", *args], input=text, capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "NO_COLOR": "1"})


def test_stdin_is_linted_under_the_given_filename(tmp_path):
    result = _stdin("-", "--stdin-filename", "pkg/train.py", "--output-format", "concise", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.startswith("pkg/train.py:3:5: TL003 ")
    plain = _stdin("-", "--output-format", "json", cwd=tmp_path)
    assert {d["path"] for d in json.loads(plain.stdout)} == {"-"}


def test_stdin_fix_writes_the_fixed_source_to_stdout(tmp_path):
    result = _stdin("--stdin-filename", "train.py", "--fix", cwd=tmp_path)
    assert "    loss = loss / accum\n" in result.stdout and "(i + 1) % accum == 0" in result.stdout
    assert "Found" not in result.stdout


def test_stdin_uses_the_config_of_the_filename(tmp_path):
    (tmp_path / "torchlint.toml").write_text('ignore = ["TL003"]\n')
    result = _stdin("-", "--stdin-filename", str(tmp_path / "train.py"), "--output-format", "json", cwd=REPO)
    assert [d["code"] for d in json.loads(result.stdout)] == ["TL004"]
