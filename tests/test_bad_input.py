"""Bad input through the real command: every file it cannot read gets one clear message naming it, the
run goes on, and the exit code follows SPEC.md (0 nothing found, 1 findings or unreadable files,
2 usage, configuration or internal errors and missing paths). Nothing hangs, nothing eats the memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ACCUMULATION_BUG, ACCUMULATION_FIXED_LINE, REPO, run_torchlint, write

BUG, FIXED_LINE = ACCUMULATION_BUG, ACCUMULATION_FIXED_LINE  # TL003 at line 3, column 5
POSIX = pytest.mark.skipif(os.name != "posix", reason="needs POSIX file types")


def found(result) -> list:
    return [(Path(d["path"]).name, d["code"], d["line"], d["column"]) for d in json.loads(result.stdout)]


def assert_one_message(result, name: str, *words: str) -> None:
    """`name` appears in exactly one line of stderr, and that line says `words`."""
    lines = [line for line in result.stderr.splitlines() if name in line]
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_syntax_error_is_tl000_at_the_parsers_line_and_other_files_are_linted(torchlint, tmp_path):
    write(tmp_path, "a_broken.py", "import torch\n\nloss.backward()\nx = = 1\nprint(x)\n")
    write(tmp_path, "b_train.py", BUG)
    result = torchlint(".", "--output-format", "json", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert found(result) == [("a_broken.py", "TL000", 4, 5), ("b_train.py", "TL003", 3, 5)]
    assert result.stderr == ""


# A syntax error in a file with no `backward(` or `grad(` call: no prefilter would pass it.
NO_LOOP_BROKEN = "import torch\n\n\ndef f(:\n    return torch.zeros(3)\n"


def test_a_named_file_that_does_not_parse_is_tl000_even_without_a_training_loop(torchlint, tmp_path):
    write(tmp_path, "broken.py", NO_LOOP_BROKEN)
    for args, stdin in ((["broken.py"], None), (["-", "--stdin-filename", "broken.py"], NO_LOOP_BROKEN)):
        result = torchlint(*args, cwd=tmp_path, stdin=stdin)
        assert result.returncode == 1, result.stderr
        assert "broken.py:4:7: TL000 SyntaxError: invalid syntax" in result.stdout
        assert "Found 1 problem" in result.stdout and "All checks passed" not in result.stdout


def test_a_folder_walk_checks_syntax_only_in_files_that_may_hold_a_training_loop(torchlint, tmp_path):
    write(tmp_path, "a_utils.py", NO_LOOP_BROKEN)
    write(tmp_path, "b_train.py", "for x in loader:\n    loss(x).backward(\n")
    walked = torchlint(".", "--output-format", "json", cwd=tmp_path)
    assert found(walked) == [("b_train.py", "TL000", 2, 21)]
    named_too = torchlint(".", "a_utils.py", "--output-format", "json", cwd=tmp_path)
    assert found(named_too) == [("a_utils.py", "TL000", 4, 7), ("b_train.py", "TL000", 2, 21)]
    # The session cache now holds a_utils.py's TL000 from the named run: a walk still leaves it out.
    assert found(torchlint(".", "--output-format", "json", cwd=tmp_path)) == found(walked)


def test_the_cache_never_carries_a_named_files_syntax_error_into_a_walk(tmp_path):
    write(tmp_path, "utils.py", NO_LOOP_BROKEN)
    write(tmp_path, "notes.py", "print('no loop here')\n")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert found(run_torchlint("utils.py", "notes.py", "--output-format", "json", *cache, cwd=tmp_path)) == [
        ("utils.py", "TL000", 4, 7)]
    for env in ({}, {"TORCHLINT_NO_PREFILTER": "1"}):  # unfiltered, the walk parses utils.py and hits the cache
        walk = run_torchlint(".", "--output-format", "json", *cache, cwd=tmp_path, env_extra=env)
        assert walk.returncode == 0 and found(walk) == [], walk.stderr


def test_named_files_without_a_loop_are_checked_alike_by_workers_and_in_process(tmp_path):
    write(tmp_path, "a_utils.py", NO_LOOP_BROKEN)
    write(tmp_path, "b_notes.py", "print('no loop here')\n")
    write(tmp_path, "c_train.py", BUG)
    for jobs in ("1", "2"):  # -j 2 on a cold run: the relay's workers check the first two
        result = run_torchlint("a_utils.py", "b_notes.py", "c_train.py", "--output-format", "json", "--no-cache",
                               "-j", jobs, cwd=tmp_path)
        assert found(result) == [("a_utils.py", "TL000", 4, 7), ("c_train.py", "TL003", 3, 5)], result.stderr


def test_parsing_a_named_file_prints_no_python_warning(torchlint, tmp_path):
    write(tmp_path, "paths.py", 'PATTERN = "\\d+"\n')  # an invalid escape: a warning, not an error
    result = torchlint("paths.py", cwd=tmp_path, env_extra={"PYTHONWARNINGS": "always"})
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout == "All checks passed.\n"


def test_non_utf8_bytes_past_the_cookie_lines_are_one_message_and_nothing_is_written(torchlint, tmp_path):
    data = ("# trainer\n" + BUG + "# caf").encode() + b"\xe9\n"
    (tmp_path / "a_latin.py").write_bytes(data)
    write(tmp_path, "b_train.py", BUG)
    for extra in ((), ("--fix",)):
        result = torchlint(".", "--output-format", "concise", *extra, cwd=tmp_path)
        assert result.returncode == 1
        assert_one_message(result, "a_latin.py", "cannot decode as utf-8", "coding")
        assert "could not be read" in result.stdout and "All checks passed" not in result.stdout
    assert (tmp_path / "a_latin.py").read_bytes() == data
    assert FIXED_LINE in (tmp_path / "b_train.py").read_text()


def test_a_latin1_file_with_a_coding_cookie_is_linted_at_the_right_columns(torchlint, tmp_path):
    source = "# -*- coding: latin-1 -*-\n" + BUG.replace("loss.backward()", "l\xf6ss = loss; l\xf6ss.backward()")
    (tmp_path / "t.py").write_bytes(source.encode("latin-1"))
    result = torchlint("t.py", "--output-format", "json", cwd=tmp_path)
    assert result.returncode == 1 and result.stderr == ""
    assert found(result) == [("t.py", "TL003", 4, 18)]


def test_a_bom_does_not_shift_positions_and_fix_keeps_it(torchlint, tmp_path):
    path = tmp_path / "t.py"
    path.write_bytes(b"\xef\xbb\xbf" + BUG.encode())
    assert found(torchlint("t.py", "--output-format", "json", cwd=tmp_path)) == [("t.py", "TL003", 3, 5)]
    assert torchlint("--fix", "t.py", cwd=tmp_path).returncode == 0
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and data.count(b"\xef\xbb\xbf") == 1
    assert FIXED_LINE.encode() in data


def test_crlf_positions_match_lf_and_fix_keeps_every_line_ending(torchlint, tmp_path):
    (tmp_path / "lf.py").write_bytes(BUG.encode())
    (tmp_path / "crlf.py").write_bytes(BUG.replace("\n", "\r\n").encode())
    result = torchlint(".", "--output-format", "json", cwd=tmp_path)
    assert sorted(found(result)) == [("crlf.py", "TL003", 3, 5), ("lf.py", "TL003", 3, 5)]
    assert torchlint("--fix", "crlf.py", cwd=tmp_path).returncode == 0
    data = (tmp_path / "crlf.py").read_bytes()
    assert data.count(b"\r\n") == data.count(b"\n") == BUG.count("\n") + 1


def test_empty_files_pass(torchlint, tmp_path):
    (tmp_path / "empty.py").write_bytes(b"")
    (tmp_path / "blank.py").write_bytes(b"\n\n   \n")
    result = torchlint(".", cwd=tmp_path)
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.strip() == "All checks passed."
    assert torchlint("--fix", ".", cwd=tmp_path).returncode == 0
    assert (tmp_path / "empty.py").read_bytes() == b""


def test_a_binary_file_named_py_is_one_message_and_the_run_goes_on(torchlint, tmp_path):
    (tmp_path / "a_blob.py").write_bytes(bytes(range(256)) * 64 + b"loss.backward()\n")
    write(tmp_path, "b_train.py", BUG)
    for extra in ((), ("--diff",), ("--fix",)):
        result = torchlint(".", "--output-format", "concise", *extra, cwd=tmp_path)
        assert result.returncode == 1
        assert_one_message(result, "a_blob.py", "binary")
        assert ("Fixed 1 problem." if extra == ("--fix",) else "b_train.py") in result.stdout
    assert FIXED_LINE in (tmp_path / "b_train.py").read_text()


def test_each_file_that_cannot_be_read_is_one_message_per_run_however_many_fix_rounds(torchlint, tmp_path):
    (tmp_path / "a_blob.py").write_bytes(b"for x in y:\n    loss.backward()\n\x00" + bytes(range(256)) * 64)
    (tmp_path / "b_blob.ipynb").write_bytes(bytes(range(256)) * 64)
    (tmp_path / "c_latin.py").write_bytes(b"for x in y:\n    loss.backward()  # caf\xe9\n")
    write(tmp_path, "d_broken.ipynb", "{ not json")
    bad = {"a_blob.py": "binary", "b_blob.ipynb": "binary", "c_latin.py": "cannot decode", "d_broken.ipynb": "JSON"}
    # Fixing these takes several rounds: TL006 and TL007 in one loop, then what their fixes leave.
    for name in ("reset_mistakes.py", "lr_schedule.py", "amp_trainer.py"):
        write(tmp_path, f"e_{name}", (REPO / "examples" / name).read_text(encoding="utf-8"))
    for extra in ((), ("--fix",), ("--unsafe-fixes",), ("--diff",), ("--fix", "--statistics")):
        result = torchlint(".", "--output-format", "concise", *extra, cwd=tmp_path)
        assert result.returncode == 1, result.stderr
        for name, words in bad.items():
            assert_one_message(result, name, words)
        assert sum(name in result.stdout for name in bad) == 0
        if "--diff" not in extra:
            assert result.stdout.count("could not be read") == 1
            assert "4 files could not be read (see the errors above)." in result.stdout


def _peak_rss_mb(args, cwd: Path):
    """Run the command in a fresh interpreter and measure its peak memory (RUSAGE_CHILDREN of that interpreter)."""
    probe = textwrap.dedent(
        """\
        import json, resource, subprocess, sys
        result = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=240)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        scale = 1024 * 1024 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB on Linux
        print(json.dumps([result.returncode, result.stdout, result.stderr, peak / scale]))
        """
    )
    command = [sys.executable, "-c", probe, sys.executable, "-m", "torchlint", *args]
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
    output = subprocess.run(command, cwd=str(cwd), capture_output=True, text=True, check=True, env=env, timeout=300)
    return json.loads(output.stdout)


@pytest.mark.skipif(sys.platform == "win32", reason="resource is POSIX-only")
def test_a_10mb_generated_file_is_linted_in_bounded_memory(tmp_path):
    # A generated data table (the usual way a .py file gets this big) and one training loop after it.
    rows = "".join(f"    ({k}, {k * 0.5!r}, 'label_{k % 97}', {k * 3}),\n" for k in range(260_000))
    text = "TABLE = [\n" + rows + "]\n\n" + BUG
    (tmp_path / "generated.py").write_text(text)
    assert (tmp_path / "generated.py").stat().st_size > 10 * 1024 * 1024
    code, stdout, stderr, peak = _peak_rss_mb(["generated.py", "--output-format", "json"], tmp_path)
    assert code == 1, stderr
    table_lines = text.count("\n") - BUG.count("\n")
    assert [(d["code"], d["line"]) for d in json.loads(stdout)] == [("TL003", table_lines + 3)]
    assert peak < 1024, f"peak RSS {peak:.0f} MB"


@pytest.mark.skipif(sys.platform == "win32", reason="resource is POSIX-only")
def test_10mb_of_dense_training_code_is_skipped_with_a_message_in_bounded_memory(tmp_path):
    functions = "".join(BUG.replace("for i,", f"def train_{k}():\n  for i,").replace("\n    ", "\n      ")
                        for k in range(50_000))
    (tmp_path / "a_dense.py").write_text(functions)
    write(tmp_path, "b_train.py", BUG)
    code, stdout, stderr, peak = _peak_rss_mb([".", "--output-format", "concise"], tmp_path)
    assert code == 1
    assert "a_dense.py" in stderr and "over the 2 MB that can be analysed; skipped" in stderr
    assert "b_train.py:3:5: TL003" in stdout
    assert peak < 1024, f"peak RSS {peak:.0f} MB"


def test_a_file_over_20mb_is_skipped_with_a_message(torchlint, tmp_path):
    with open(tmp_path / "a_huge.py", "wb") as stream:  # sparse: costs no disk
        stream.truncate(21 * 1024 * 1024)
    write(tmp_path, "b_train.py", BUG)
    result = torchlint(".", "--output-format", "concise", cwd=tmp_path)
    assert result.returncode == 1
    assert_one_message(result, "a_huge.py", "21 MB, over the 20 MB limit; skipped")
    assert "TL003" in result.stdout


@POSIX
@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads files without permission")
def test_a_file_without_read_permission_is_one_message(torchlint, tmp_path):
    path = write(tmp_path, "a_secret.py", BUG)
    write(tmp_path, "b_train.py", BUG)
    path.chmod(0)
    try:
        for extra in ((), ("--fix",)):
            result = torchlint(".", "--output-format", "concise", *extra, cwd=tmp_path)
            assert result.returncode == 1
            assert_one_message(result, "a_secret.py", "permission denied")
    finally:
        path.chmod(0o644)
    assert path.read_text() == BUG


@POSIX
def test_files_that_cannot_be_read_even_by_root_are_one_message_each(torchlint, tmp_path):
    # Stand-ins for an unreadable file that work as root too: a FIFO (reading it would block for ever),
    # a symlink to nowhere, and a symlink to itself.
    os.mkfifo(tmp_path / "a_fifo.py")
    (tmp_path / "b_dangling.py").symlink_to(tmp_path / "gone.py")
    (tmp_path / "c_self.py").symlink_to(tmp_path / "c_self.py")
    write(tmp_path, "d_train.py", BUG)
    named = torchlint("a_fifo.py", "d_train.py", "--output-format", "concise", cwd=tmp_path)
    assert named.returncode == 1 and "d_train.py:3:5: TL003" in named.stdout
    for extra in ((), ("--diff",), ("--fix",)):
        result = torchlint(".", "--output-format", "concise", *extra, cwd=tmp_path)
        assert result.returncode == 1, result.stderr
        assert_one_message(result, "a_fifo.py", "not a regular file")
        assert_one_message(result, "b_dangling.py", "broken symbolic link")
        assert_one_message(result, "c_self.py", "cannot read")
    assert FIXED_LINE in (tmp_path / "d_train.py").read_text()


@POSIX
def test_a_symlink_loop_inside_a_folder_ends_and_lints_each_file_once(torchlint, tmp_path):
    write(tmp_path, "pkg/train.py", BUG)
    (tmp_path / "pkg" / "again").symlink_to(tmp_path / "pkg", target_is_directory=True)
    (tmp_path / "pkg" / "up").symlink_to(tmp_path, target_is_directory=True)
    result = torchlint(".", "--output-format", "json", cwd=tmp_path)
    assert result.returncode == 1 and result.stderr == ""
    assert found(result) == [("train.py", "TL003", 3, 5)]


def test_a_folder_named_like_a_python_file_is_walked_not_read(torchlint, tmp_path):
    write(tmp_path, "models.py/train.py", BUG)
    for target in (".", "models.py"):
        result = torchlint(target, "--output-format", "json", cwd=tmp_path)
        assert result.returncode == 1 and result.stderr == ""
        assert found(result) == [("train.py", "TL003", 3, 5)]


def test_a_missing_path_is_exit_2_with_a_message_and_no_success_claim(torchlint, tmp_path):
    for extra in ((), ("--fix",), ("--diff",)):
        result = torchlint("nope.py", *extra, cwd=tmp_path)
        assert result.returncode == 2
        assert result.stderr.strip().splitlines()[0] == "error: nope.py: no such file or folder"
        assert "All checks passed" not in result.stdout


def test_a_notebook_that_is_not_json_is_one_message_and_the_run_goes_on(torchlint, tmp_path):
    write(tmp_path, "a_broken.ipynb", '{"cells": [{"cell_type": "code", "source": ["loss.backward()"')
    write(tmp_path, "b_train.py", BUG)
    for extra in ((), ("--fix",)):
        result = torchlint(".", "--output-format", "concise", *extra, cwd=tmp_path)
        assert result.returncode == 1
        assert_one_message(result, "a_broken.ipynb", "not valid JSON", "line 1")
    assert FIXED_LINE in (tmp_path / "b_train.py").read_text()


def test_a_pyproject_that_is_not_toml_is_exit_2_naming_the_file_and_line(torchlint, tmp_path):
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\n\n[tool.torchlint]\nselect = ["TL003"\nignore = []\n')
    write(tmp_path, "train.py", BUG)
    result = torchlint(".", cwd=tmp_path)
    assert result.returncode == 2
    assert_one_message(result, "pyproject.toml", "invalid TOML", "line ")
    assert (tmp_path / "train.py").read_text() == BUG
    assert torchlint("--fix", ".", cwd=tmp_path).returncode == 2
    assert (tmp_path / "train.py").read_text() == BUG


# Tabs and spaces mixed in indentation in a way CPython accepts (a tab goes to the next multiple of 8) but
# LibCST's tokenizer rejects ("no matching outer block for dedent").
TABS_PYTHON_RUNS = ('with open("log.txt", "w") as f:\t\n\t  f.write("x")\n\t  for i in range(3):\n'
                    '        # a comment at another indentation\n\t\t    loss.backward()\n\nprint(1)\n')


def test_code_python_runs_but_the_parser_cannot_read_is_a_message_not_a_syntax_error(torchlint, tmp_path):
    compile(TABS_PYTHON_RUNS, "tabs.py", "exec")  # Python runs it
    write(tmp_path, "a_tabs.py", TABS_PYTHON_RUNS)
    write(tmp_path, "b_train.py", BUG)
    result = torchlint(".", "--output-format", "json", cwd=tmp_path)
    assert found(result) == [("b_train.py", "TL003", 3, 5)]  # no TL000 on a file Python runs
    assert_one_message(result, "a_tabs.py", "not analysed", "Python runs this code", "LibCST")
    assert result.returncode == 1


@pytest.mark.parametrize("data", [
    b"import torch\nx = 1\n",
    b"# -*- coding: latin-1 -*-\nname = '\xe9'\n",
    b"#!/usr/bin/env python\n# coding: latin-1\nname = '\xe9'\n",
    b"x = 1\n# coding: latin-1\nname = '\xe9'\n",  # a cookie after code on line 1 is no cookie
    b"\xef\xbb\xbfimport torch\n",
    b"name = '\xe9'\nx = 1\n",  # not UTF-8 on the first line, no cookie
    b"x = 1\ny = 2\nname = '\xe9'\n",  # not UTF-8 further down
    b"x = 1",
    b"",
])
def test_a_file_is_decoded_as_python_decodes_it(data):
    """Every file is decoded as Python reads its source: a BOM, else a `coding` cookie on one of the first two
    lines, else UTF-8; what cannot be decoded so is unreadable, with the reason."""
    import io
    import tokenize

    from torchlint.engine import UnreadableFile, decode_source

    try:
        encoding = tokenize.detect_encoding(io.BytesIO(data).readline)[0]
        expected = data.decode("utf-8-sig" if encoding == "utf-8-sig" else encoding)
    except (SyntaxError, UnicodeDecodeError):
        expected = None
    try:
        text = decode_source(data, "f.py").text
    except UnreadableFile as error:
        assert expected is None and "f.py: cannot decode as " in str(error)
        return
    assert text == expected
