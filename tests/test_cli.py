"""The `torchlint` command as a user meets it: findings, formats, exit codes, selection, discovery."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from conftest import PROJECT_URLS, REPO, write

# Output, options and messages: the same with and without the speed-ups (test_speed_modes compares those).
TORCHLINT_MODES = ["pool+cache"]

EXAMPLE_BUGS = {
    ("multi_head_training.py", "TL001"),
    ("amp_trainer.py", "TL002"),
    ("finetune_accumulation.py", "TL003"),
    ("accumulate_every_n.py", "TL004"),
    ("gan_and_two_losses.py", "TL005"),
    ("reset_mistakes.py", "TL006"),
    ("reset_mistakes.py", "TL007"),
    ("logging_and_eval.py", "TL008"),
    ("lr_schedule.py", "TL009"),
    ("lr_schedule.py", "TL010"),
    ("logging_and_eval.py", "TL011"),
    ("char_rnn.py", "TL012"),
    ("ddp_amp_accumulation.py", "TL014"),
    ("ddp_amp_accumulation.py", "TL016"),
    ("gan_hard_examples.py", "TL015"),
    ("gan_hard_examples.py", "TL018"),
    ("llm_finetune.py", "TL013"),
    ("llm_finetune.py", "TL017"),
}

ACCUMULATION_BUG = textwrap.dedent(
    """\
    import torch.nn as nn

    criterion = nn.CrossEntropyLoss()
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        if i % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
    optimizer.step()  # the gradients left after the last window: no TL010
    optimizer.zero_grad()
    """
)
CLEAN = textwrap.dedent(
    """\
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    """
)


def findings(result) -> list:
    return json.loads(result.stdout)


def test_examples_report_each_bug_once_at_its_file(torchlint):
    result = torchlint("examples", "--output-format", "json")
    assert result.returncode == 1
    found = {(Path(d["path"]).name, d["code"]) for d in findings(result)}
    assert found == EXAMPLE_BUGS
    assert len(findings(result)) == len(EXAMPLE_BUGS)


def test_full_output_shows_code_frame_caret_hint_and_summary(torchlint):
    result = torchlint("examples/finetune_accumulation.py")
    assert result.returncode == 1
    assert "examples/finetune_accumulation.py:34:13: TL003 [*] `loss` is a mean" in result.stdout
    assert "34 |             loss.backward()" in result.stdout
    assert re.search(r"\|\s+\^{15}\n", result.stdout)
    assert "= help: Divide `loss` by `accumulation_steps` before `backward()` (fixable with --fix)" in result.stdout
    assert "  = docs: torchlint rule TL003\n" in result.stdout  # works offline, unlike a link
    assert "http" not in result.stdout
    assert result.stdout.rstrip().endswith("Found 1 problem (1 fixable with --fix).")
    assert "\x1b[" not in result.stdout  # no colour when not a terminal


def test_fix_repairs_examples_and_second_run_finds_nothing_fixable(torchlint, tmp_path):
    copy = tmp_path / "examples"
    shutil.copytree(REPO / "examples", copy)
    first = torchlint("--fix", str(copy), "--output-format", "concise")
    assert first.returncode == 1  # unsafe fixes wait for --unsafe-fixes; TL011, TL015, TL016 and TL017 have no fix
    assert "Fixed 11 problems." in first.stdout
    remaining = ["TL002", "TL010", "TL011", "TL015", "TL016", "TL017", "TL018"]
    assert sorted(re.findall(r": (TL\d{3}) ", first.stdout)) == remaining
    assert "3 more fixable with --unsafe-fixes." in first.stdout
    snapshot = {p.name: p.read_bytes() for p in copy.glob("*.py")}
    second = torchlint("--fix", str(copy), "--output-format", "json")
    assert sorted(d["code"] for d in findings(second)) == remaining
    assert {p.name: p.read_bytes() for p in copy.glob("*.py")} == snapshot
    unsafe = torchlint("--unsafe-fixes", str(copy), "--output-format", "json")
    assert sorted(d["code"] for d in findings(unsafe)) == ["TL011", "TL015", "TL016", "TL017"]
    for path in copy.glob("*.py"):
        cst.parse_module(path.read_text(encoding="utf-8"))


def test_a_step_on_the_first_micro_batch_reports_its_left_over_window_up_front(torchlint, tmp_path):
    """`i % accum == 0` (0-based) has two problems, and the first run names both: fixing TL004 reveals
    nothing new, and a pre-commit hook with `--fix` does not fail on a finding it never showed."""
    path = write(tmp_path, "train.py", textwrap.dedent("""\
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) / accum
            loss.backward()
            if i % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
    """))
    first = torchlint(str(path), "--output-format", "json")
    assert [(d["code"], d["line"]) for d in findings(first)] == [("TL004", 4), ("TL010", 4)]
    fixed = torchlint("--fix", str(path), "--output-format", "concise")
    assert "Fixed 1 problem." in fixed.stdout
    assert re.findall(r": (TL\d{3}) ", fixed.stdout) == ["TL010"]
    assert "if (i + 1) % accum == 0:" in path.read_text(encoding="utf-8")
    again = torchlint("--fix", str(path), "--output-format", "json")
    assert [d["code"] for d in findings(again)] == ["TL010"]


def test_clean_code_passes_with_exit_zero(torchlint, tmp_path):
    write(tmp_path, "train.py", CLEAN)
    result = torchlint(str(tmp_path))
    assert result.returncode == 0
    assert result.stdout.strip() == "All checks passed."


def test_check_subcommand_is_the_default_command(torchlint, tmp_path):
    path = write(tmp_path, "train.py", ACCUMULATION_BUG)
    plain = torchlint(str(path), "--output-format", "concise")
    explicit = torchlint("check", str(path), "--output-format", "concise")
    assert plain.stdout == explicit.stdout and plain.returncode == explicit.returncode == 1


def test_concise_format_is_one_line_per_finding(torchlint, tmp_path):
    path = write(tmp_path, "train.py", ACCUMULATION_BUG)
    result = torchlint(str(path), "--output-format", "concise")
    lines = [line for line in result.stdout.splitlines() if line.startswith(str(path))]
    assert [line.split(": ", 2)[1].split()[0] for line in lines] == ["TL003", "TL004"]
    assert lines[0].startswith(f"{path}:6:5: TL003 [*] ")
    assert lines[1].startswith(f"{path}:7:8: TL004 [*] ")


def test_json_format_has_the_documented_fields(torchlint, tmp_path):
    path = write(tmp_path, "train.py", ACCUMULATION_BUG)
    result = torchlint(str(path), "--output-format", "json")
    first = findings(result)[0]
    assert set(first) == {"code", "name", "severity", "message", "path", "line", "column", "end_line",
                          "end_column", "fix", "timeline"}
    # `i % accum_steps == 0` on a run the code does not size: N and the length are stated example values.
    assert first["timeline"] == (
        "timeline (accum_steps = 4, an example value; an example run of 10 micro-batches): steps after "
        "micro-batches 1, 5, 9 — windows of 1, 4, 4 (+1 left over)\nexpected: each loss divided by 4, so each "
        "step applies its window's mean gradient (undivided: 1×, 4×, 4× a micro-batch's)")
    assert (first["code"], first["name"], first["severity"]) == ("TL003", "unscaled-accumulated-loss", "error")
    assert (first["line"], first["column"], first["end_line"], first["end_column"]) == (6, 5, 6, 20)
    assert first["fix"]["applicability"] == "safe"
    assert first["fix"]["edits"] == [
        {"line": 6, "column": 1, "end_line": 6, "end_column": 1, "content": "    loss = loss / accum_steps\n"}
    ]
    assert "Found" not in result.stdout  # pure JSON


def test_diff_prints_the_fix_and_writes_nothing(torchlint, tmp_path):
    path = write(tmp_path, "train.py", ACCUMULATION_BUG)
    result = torchlint("--diff", str(path))
    assert result.returncode == 1
    assert "+    loss = loss / accum_steps" in result.stdout
    assert "-    if i % accum_steps == 0:" in result.stdout and "+    if (i + 1) % accum_steps == 0:" in result.stdout
    assert path.read_text(encoding="utf-8") == ACCUMULATION_BUG
    clean = write(tmp_path, "clean.py", CLEAN)
    assert torchlint("--diff", str(clean)).returncode == 0


def test_select_ignore_and_extend_select_take_codes_prefixes_and_names(torchlint, tmp_path):
    path = str(write(tmp_path, "train.py", ACCUMULATION_BUG))

    def codes(*args):
        return sorted({d["code"] for d in findings(torchlint(path, "--output-format", "json", *args))})

    assert codes() == ["TL003", "TL004"]
    assert codes("--select", "TL004") == ["TL004"]
    assert codes("--select", "unscaled-accumulated-loss") == ["TL003"]
    assert codes("--select", "TL00") == ["TL003", "TL004"]
    assert codes("--ignore", "TL003,TL004") == []
    assert codes("--select", "TL001", "--extend-select", "TL004") == ["TL004"]


def test_unknown_selector_is_a_usage_error(torchlint, tmp_path):
    result = torchlint(str(write(tmp_path, "t.py", CLEAN)), "--select", "TL999")
    assert result.returncode == 2
    assert "unknown rule selector `TL999`" in result.stderr


def test_exit_zero_keeps_findings_but_exits_zero(torchlint, tmp_path):
    result = torchlint(str(write(tmp_path, "t.py", ACCUMULATION_BUG)), "--exit-zero")
    assert result.returncode == 0 and "Found 2 problems" in result.stdout


def test_missing_path_is_reported_and_other_paths_are_still_linted(torchlint, tmp_path):
    path = write(tmp_path, "t.py", ACCUMULATION_BUG)
    result = torchlint(str(tmp_path / "nope.py"), str(path), "--output-format", "concise")
    assert result.returncode == 2
    assert f"{tmp_path / 'nope.py'}: no such file or folder" in result.stderr
    assert "TL003" in result.stdout


def test_syntax_error_is_tl000_and_the_run_goes_on(torchlint, tmp_path):
    write(tmp_path, "a_broken.py", "loss.backward(\nfor x in y:\n    pass\n")
    write(tmp_path, "b_train.py", ACCUMULATION_BUG)
    result = torchlint(str(tmp_path), "--output-format", "json")
    assert result.returncode == 1
    found = findings(result)
    broken = [d for d in found if d["path"].endswith("a_broken.py")]
    assert [(d["code"], d["name"]) for d in broken] == [("TL000", "syntax-error")]
    assert broken[0]["line"] in (1, 2) and "SyntaxError" in broken[0]["message"]
    assert {d["code"] for d in found if d["path"].endswith("b_train.py")} == {"TL003", "TL004"}


def test_noqa_comments_suppress_the_named_code_only(torchlint, tmp_path):
    text = ACCUMULATION_BUG.replace("loss.backward()", "loss.backward()  # noqa: TL003")
    path = write(tmp_path, "t.py", text)
    assert [d["code"] for d in findings(torchlint(str(path), "--output-format", "json"))] == ["TL004"]
    text = ACCUMULATION_BUG.replace("loss.backward()", "loss.backward()  # noqa: TL004")
    write(tmp_path, "t.py", text)
    assert [d["code"] for d in findings(torchlint(str(path), "--output-format", "json"))] == ["TL003", "TL004"]
    text = ACCUMULATION_BUG.replace("loss.backward()", "loss.backward()  # noqa")
    write(tmp_path, "t.py", text)
    assert [d["code"] for d in findings(torchlint(str(path), "--output-format", "json"))] == ["TL004"]


def test_file_level_noqa_skips_the_file(torchlint, tmp_path):
    path = write(tmp_path, "t.py", "# torchlint: noqa\n" + ACCUMULATION_BUG)
    assert torchlint(str(path)).returncode == 0


def test_discovery_respects_gitignore_and_default_excludes(torchlint, tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    write(tmp_path, ".gitignore", "generated/\nscratch_*.py\n")
    write(tmp_path, "src/train.py", ACCUMULATION_BUG)
    for ignored in ("generated/train.py", "scratch_1.py", ".venv/lib/train.py", "build/train.py",
                    "node_modules/x/train.py", "src/__pycache__/train.py", "notes/train.txt"):
        write(tmp_path, ignored, ACCUMULATION_BUG)
    result = torchlint(".", "--output-format", "json", cwd=tmp_path)
    assert {d["path"] for d in findings(result)} == {str(Path("src/train.py"))}
    explicit = torchlint("scratch_1.py", "--output-format", "json", cwd=tmp_path)
    assert {d["path"] for d in findings(explicit)} == {"scratch_1.py"}
    everything = torchlint(".", "--no-respect-gitignore", "--output-format", "json", cwd=tmp_path)
    assert str(Path("generated/train.py")) in {d["path"] for d in findings(everything)}


def test_every_full_format_finding_says_how_to_read_its_rule_offline(torchlint, tmp_path):
    write(tmp_path, "broken.py", "def f(:\n")
    write(tmp_path, "train.py", ACCUMULATION_BUG)
    result = torchlint("broken.py", "train.py", cwd=tmp_path)
    heads = re.findall(r"^\S+:\d+:\d+: (TL\d{3}) ", result.stdout, re.MULTILINE)
    hints = re.findall(r"^  = docs: torchlint rule (TL\d{3})$", result.stdout, re.MULTILINE)
    assert heads == hints == ["TL000", "TL003", "TL004"]
    for code in hints:
        assert torchlint("rule", code).stdout.startswith(f"# {code} ")


def test_the_documentation_url_is_written_in_pyproject_only():
    base = PROJECT_URLS["Documentation"]
    assert base.endswith("/rules/")
    host = base.split("/")[2]
    assert [path for path in (REPO / "torchlint").rglob("*.py") if host in path.read_text(encoding="utf-8")] == []


def test_help_names_every_command_including_lsp(torchlint):
    result = torchlint("--help")
    assert result.returncode == 0
    commands = result.stdout.split("commands:\n", 1)[1]
    assert [line.split()[1] for line in commands.splitlines() if line.startswith("  torchlint ")] == [
        "[check]", "rule", "lsp"]
    assert "run the Language Server on stdio, for editors" in commands
    lsp_help = torchlint("lsp", "--help")
    assert lsp_help.returncode == 0 and "--debounce-ms" in lsp_help.stdout


def test_version_is_fast_and_imports_no_heavy_module():
    code = (
        "import sys; from torchlint.cli import main; main(['--version']); "
        "print(sorted(m for m in ('libcst', 'rich', 'torchlint.engine') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    version, heavy = result.stdout.splitlines()
    assert version.startswith("torchlint ")
    assert heavy == "[]"


def test_undecodable_file_gets_one_clear_message_and_the_run_goes_on(torchlint, tmp_path):
    (tmp_path / "a_latin.py").write_bytes(b"# caf\xe9\nloss.backward()\n")
    write(tmp_path, "b_train.py", ACCUMULATION_BUG)
    result = torchlint(str(tmp_path), "--output-format", "concise")
    assert result.returncode == 1
    assert result.stderr.count("a_latin.py") == 1 and "cannot decode as utf-8" in result.stderr
    assert "TL003" in result.stdout


def test_progress_bar_only_for_long_runs_on_a_terminal(monkeypatch, capsys):
    from torchlint import cli

    def draw(total: int) -> str:
        with cli._progress(total) as advance:
            for _ in range(total):
                advance()
        return capsys.readouterr().err

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    assert draw(cli.PROGRESS_MIN_FILES) == ""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert draw(10) == ""
    assert "torchlint" in draw(cli.PROGRESS_MIN_FILES)
    monkeypatch.setenv("CI", "true")
    assert draw(cli.PROGRESS_MIN_FILES) == ""


def test_a_reader_that_stops_reading_gets_no_traceback(tmp_path):
    # `torchlint . | head -1`: the pipe closes while the report is printed
    for index in range(3):
        write(tmp_path, f"train_{index}.py", ACCUMULATION_BUG)  # findings to print
    process = subprocess.Popen([sys.executable, "-m", "torchlint", "--no-cache", "--output-format", "full",
                                str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # before anything is printed: the report's first write finds no reader
    error = process.stderr.read().decode()
    process.wait(timeout=120)
    assert "Traceback" not in error
    assert "BrokenPipeError" not in error
    assert process.returncode == 2


def test_the_process_that_reads_a_folder_makes_no_full_collection_and_restores_the_collector(tmp_path):
    # The main process keeps what it reads of every file, so its heap only grows: the cyclic collector's full
    # collections (each a walk of all of it) are off while it reads and hands out files, and back after.
    for index in range(3):
        write(tmp_path, f"train_{index}.py", CLEAN)
    script = textwrap.dedent(f"""
        import gc, json, sys
        from torchlint import runner
        from torchlint.cli import main
        seen = []
        real = runner.lint_files
        def lint_files(*args, **kwargs):
            seen.append(gc.get_threshold())
            return real(*args, **kwargs)
        runner.lint_files = lint_files
        before = gc.get_threshold()
        code = main(["--no-cache", "--output-format", "concise", {str(tmp_path)!r}])
        print(json.dumps({{"code": code, "before": before, "during": seen, "after": gc.get_threshold()}}))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=REPO)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["code"] == 0
    assert report["after"] == report["before"]
    [during] = report["during"]
    assert during[:2] == report["before"][:2]  # the young generations are collected as ever
    assert during[2] > 1_000_000  # the oldest never is, automatically


def test_young_collections_only_restores_the_thresholds_when_the_block_raises():
    import gc

    from torchlint.collector import young_collections_only

    before = gc.get_threshold()
    with pytest.raises(KeyError):
        with young_collections_only():
            assert gc.get_threshold()[2] > 1_000_000
            raise KeyError("stop")
    assert gc.get_threshold() == before
