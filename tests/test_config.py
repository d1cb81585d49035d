"""`[tool.torchlint]` / `torchlint.toml`: selection, excludes, per-file ignores, and clear errors."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from conftest import write

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


def codes(result) -> list:
    return sorted({(Path(d["path"]).as_posix(), d["code"]) for d in json.loads(result.stdout)})


def test_pyproject_ignore_and_select_apply(torchlint, tmp_path):
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\n\n[tool.torchlint]\nignore = ["TL004"]\n')
    write(tmp_path, "train.py", BUG)
    result = torchlint(".", "--output-format", "json", cwd=tmp_path)
    assert codes(result) == [("train.py", "TL003")]
    write(tmp_path, "pyproject.toml", '[tool.torchlint]\nselect = ["off-by-one-accumulation-step"]\n')
    assert codes(torchlint(".", "--output-format", "json", cwd=tmp_path)) == [("train.py", "TL004")]


def test_command_line_select_overrides_and_ignore_adds(torchlint, tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.torchlint]\nselect = ["TL003"]\n')
    write(tmp_path, "train.py", BUG)
    assert codes(torchlint(".", "--select", "TL004", "--output-format", "json", cwd=tmp_path)) == [
        ("train.py", "TL004")]
    assert codes(torchlint(".", "--ignore", "TL003", "--output-format", "json", cwd=tmp_path)) == []


def test_nearest_config_wins_for_each_file(torchlint, tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.torchlint]\nignore = ["TL003"]\n')
    write(tmp_path, "top.py", BUG)
    write(tmp_path, "sub/torchlint.toml", 'ignore = ["TL004"]\n')
    write(tmp_path, "sub/inner.py", BUG)
    write(tmp_path, "other/pyproject.toml", '[project]\nname = "no-torchlint-table"\n')
    write(tmp_path, "other/plain.py", BUG)
    assert codes(torchlint(".", "--output-format", "json", cwd=tmp_path)) == [
        ("other/plain.py", "TL004"), ("sub/inner.py", "TL003"), ("top.py", "TL004")]


def test_per_file_ignores_and_excludes(torchlint, tmp_path):
    write(tmp_path, "pyproject.toml", textwrap.dedent(
        """\
        [tool.torchlint]
        extend-exclude = ["generated/"]
        [tool.torchlint.per-file-ignores]
        "legacy/*.py" = ["TL003", "TL004"]
        """))
    write(tmp_path, "legacy/old.py", BUG)
    write(tmp_path, "generated/gen.py", BUG)
    write(tmp_path, "new.py", BUG)
    assert codes(torchlint(".", "--output-format", "json", cwd=tmp_path)) == [("new.py", "TL003"), ("new.py", "TL004")]
    # A file named explicitly is always linted.
    assert codes(torchlint("generated/gen.py", "--output-format", "json", cwd=tmp_path)) == [
        ("generated/gen.py", "TL003"), ("generated/gen.py", "TL004")]


def test_exclude_replaces_the_builtin_folder_list(torchlint, tmp_path):
    write(tmp_path, "torchlint.toml", 'exclude = ["vendored/"]\n')
    write(tmp_path, "build/train.py", BUG)
    write(tmp_path, "vendored/train.py", BUG)
    found = {path for path, _ in codes(torchlint(".", "--output-format", "json", cwd=tmp_path))}
    assert found == {"build/train.py"}


def test_respect_gitignore_false_lints_ignored_files(torchlint, tmp_path):
    (tmp_path / ".git").mkdir()
    write(tmp_path, ".gitignore", "ignored.py\n")
    write(tmp_path, "ignored.py", BUG)
    assert codes(torchlint(".", "--output-format", "json", cwd=tmp_path)) == []
    write(tmp_path, "pyproject.toml", "[tool.torchlint]\nrespect-gitignore = false\n")
    assert len(codes(torchlint(".", "--output-format", "json", cwd=tmp_path))) == 2


def test_unknown_key_is_an_error_naming_file_and_key(torchlint, tmp_path):
    config = write(tmp_path, "pyproject.toml", '[tool.torchlint]\nselct = ["TL003"]\n')
    write(tmp_path, "train.py", BUG)
    result = torchlint(".", cwd=tmp_path)
    assert result.returncode == 2
    assert f"{config}: unknown key `selct` in [tool.torchlint]" in result.stderr


def test_unknown_rule_in_config_is_an_error(torchlint, tmp_path):
    config = write(tmp_path, "torchlint.toml", 'ignore = ["TL999"]\n')
    write(tmp_path, "train.py", BUG)
    result = torchlint(".", cwd=tmp_path)
    assert result.returncode == 2
    assert f"{config}: unknown rule selector `TL999` in `ignore`" in result.stderr


def test_wrong_type_is_an_error(torchlint, tmp_path):
    write(tmp_path, "torchlint.toml", 'select = "TL003"\n')
    write(tmp_path, "train.py", BUG)
    result = torchlint(".", cwd=tmp_path)
    assert result.returncode == 2 and "`select` must be a list of strings" in result.stderr


def test_invalid_toml_at_the_end_of_the_file_names_the_last_line(torchlint, tmp_path):
    config = write(tmp_path, "pyproject.toml", '[tool.torchlint]\nselect = [\n')
    write(tmp_path, "train.py", BUG)
    result = torchlint(".", cwd=tmp_path)
    assert result.returncode == 2
    assert f"{config}: invalid TOML" in result.stderr and "line 2, the end of the file" in result.stderr


def test_invalid_toml_is_an_error_naming_file_and_line(torchlint, tmp_path):
    config = write(tmp_path, "pyproject.toml", '[tool.torchlint]\nselect = TL003\n')
    write(tmp_path, "train.py", BUG)
    result = torchlint(".", cwd=tmp_path)
    assert result.returncode == 2
    assert str(config) in result.stderr and "invalid TOML" in result.stderr and "line 2" in result.stderr


def test_config_option_forces_one_file(torchlint, tmp_path):
    forced = write(tmp_path, "ci/torchlint.toml", 'select = ["TL004"]\n')
    write(tmp_path, "train.py", BUG)
    assert codes(torchlint(".", "--config", str(forced), "--output-format", "json", cwd=tmp_path)) == [
        ("train.py", "TL004")]
