"""Notebooks through the real command: findings per cell, fixes written back into the cells, bad JSON."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest


def notebook(*cells: str, outputs=None) -> str:
    data = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# Fine-tuning\n"]},
            *(
                {"cell_type": "code", "execution_count": index + 1, "metadata": {"tags": ["train"]},
                 "outputs": outputs or [], "source": cell.splitlines(keepends=True)}
                for index, cell in enumerate(cells)
            ),
        ],
        "metadata": {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(data, indent=1) + "\n"


SETUP = "%matplotlib inline\nimport torch.nn as nn\ncriterion = nn.MSELoss()\n"
LOOP = (
    "for i, (x, y) in enumerate(loader):\n"
    "    loss = criterion(model(x), y)\n"
    "    loss.backward()\n"
    "    if (i + 1) % accum == 0 or (i + 1) == len(loader):\n"
    "        optimizer.step()\n"
    "        optimizer.zero_grad()\n"
)


def test_notebook_findings_name_the_cell_and_the_line_in_it(torchlint, tmp_path):
    (tmp_path / "train.ipynb").write_text(notebook(SETUP, "!nvidia-smi\n" + LOOP))
    concise = torchlint("train.ipynb", "--output-format", "concise", cwd=tmp_path)
    assert concise.returncode == 1
    assert concise.stdout.startswith("train.ipynb:cell 2:4:5: TL003 [*] `loss` is a mean")
    found = json.loads(torchlint("train.ipynb", "--output-format", "json", cwd=tmp_path).stdout)
    assert [(d["code"], d["cell"], d["line"], d["column"]) for d in found] == [("TL003", 2, 4, 5)]
    full = torchlint("train.ipynb", cwd=tmp_path).stdout
    assert "4 |     loss.backward()" in full


def test_notebooks_are_found_in_folders(torchlint, tmp_path):
    (tmp_path / "nb").mkdir()
    (tmp_path / "nb" / "train.ipynb").write_text(notebook(SETUP, LOOP))
    found = json.loads(torchlint(".", "--output-format", "json", cwd=tmp_path).stdout)
    assert [Path(d["path"]).name for d in found] == ["train.ipynb"]


def test_fix_writes_into_the_right_cell_and_keeps_the_rest(torchlint, tmp_path):
    path = tmp_path / "train.ipynb"
    outputs = [{"output_type": "stream", "name": "stdout", "text": ["epoch 0\n"]}]
    path.write_text(notebook(SETUP, "!nvidia-smi\n" + LOOP, outputs=outputs))
    before = json.loads(path.read_text())
    result = torchlint("--fix", "train.ipynb", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    after = json.loads(path.read_text())
    assert "".join(after["cells"][2]["source"]) == "!nvidia-smi\n" + LOOP.replace(
        "    loss.backward()\n", "    loss = loss / accum\n    loss.backward()\n")
    for key in ("metadata", "nbformat", "nbformat_minor"):
        assert after[key] == before[key]
    for old, new in zip(before["cells"], after["cells"]):
        assert {k: v for k, v in old.items() if k != "source"} == {k: v for k, v in new.items() if k != "source"}
    assert after["cells"][:2] == before["cells"][:2]
    assert path.read_text().startswith('{\n "cells": [\n  {\n')  # Jupyter's one-space indent kept
    assert torchlint("--fix", "train.ipynb", cwd=tmp_path).returncode == 0
    assert json.loads(path.read_text()) == after


def test_invalid_notebook_gets_a_clear_message_and_the_run_goes_on(torchlint, tmp_path):
    (tmp_path / "a_broken.ipynb").write_text('{"cells": [')
    (tmp_path / "b_train.ipynb").write_text(notebook(SETUP, LOOP))
    result = torchlint(".", "--output-format", "concise", cwd=tmp_path)
    assert result.returncode == 1
    assert "a_broken.ipynb: not valid JSON" in result.stderr
    assert "b_train.ipynb:cell 2:3:5: TL003" in result.stdout



def test_a_walked_notebook_with_a_cell_without_source_gets_a_clear_message(torchlint, tmp_path):
    """Told even when the notebook trains nothing, and so is never built into a program."""
    data = json.loads(notebook("print('hello')\n"))
    del data["cells"][1]["source"]
    (tmp_path / "a_bad.ipynb").write_text(json.dumps(data))
    (tmp_path / "b_train.ipynb").write_text(notebook(SETUP, LOOP))
    result = torchlint(".", "--output-format", "concise", cwd=tmp_path)
    assert "a_bad.ipynb: code cell 1 (cell 2 of the notebook) has no `source`" in result.stderr
    assert "b_train.ipynb:cell 2:3:5: TL003" in result.stdout


def test_a_walked_notebook_that_spells_its_backward_with_json_escapes_is_still_linted(torchlint, tmp_path):
    """Whether a notebook found in a folder may train is judged on its cells' code, not on the JSON text,
    where `backward` may be written `b\\u0061ckward`."""
    text = notebook(SETUP, LOOP).replace("backward", "b\\u0061ckward")
    assert "backward" not in text
    (tmp_path / "nb").mkdir()
    (tmp_path / "nb" / "train.ipynb").write_text(text)
    assert findings(torchlint(".", "--output-format", "json", cwd=tmp_path)) == [("TL003", 2, 3)]


def test_a_walked_notebook_that_trains_nothing_is_not_built_into_a_program(tmp_path, monkeypatch):
    """Masking its magics line by line and finding its cells in the JSON took most of the time a walk spent on
    notebooks, for nothing: none of its cells can train, and none is checked for syntax."""
    import torchlint.notebook
    from torchlint.runner import Task, lint_files

    def refuse(*args, **kwargs):
        raise AssertionError("the program of a notebook that trains nothing was built")

    idle = tmp_path / "plots.ipynb"
    idle.write_text(notebook("%matplotlib inline\nimport torch\n", "x = torch.randn(3, requires_grad=True)\n",
                             outputs=[{"output_type": "stream", "name": "stdout", "text": ["loss.backward\n"]}]))
    monkeypatch.setattr(torchlint.notebook, "read_notebook", refuse)
    assert lint_files([Task(idle, (), walked=True)], jobs=1)[0].diagnostics == ()
    with pytest.raises(AssertionError, match="was built"):  # named, it is checked for syntax: built
        lint_files([Task(idle, (), walked=False)], jobs=1)


# --- cells that are not Python, and cells that do not parse ---------------------------------

# Looks like a training step, but it is shell: Jupyter hands it to bash.
BASH_CELL = "%%bash\nfor run in runs/*; do\n  grep 'loss.backward()' $run/log.txt | tail -n 1\ndone\n"
PASTED_LOG = "Epoch 1/10 loss: 0.532 acc: 0.81\nEpoch 2/10 loss: 0.401 acc: 0.85\n"
PASTED_TRACEBACK = (
    "---------------------------------------------------------------------------\n"
    "RuntimeError                              Traceback (most recent call last)\n"
    "----> 3     loss.backward()\n"
    "RuntimeError: Trying to backward through the graph a second time\n"
)
CLEAN_LOOP = LOOP.replace("    loss.backward()\n", "    (loss / accum).backward()\n")


def findings(result):
    return [(d["code"], d["cell"], d["line"]) for d in json.loads(result.stdout)]


def test_cells_in_another_language_are_not_linted(torchlint, tmp_path):
    timed = "%%time\n" + CLEAN_LOOP
    (tmp_path / "train.ipynb").write_text(notebook(SETUP, BASH_CELL, "%%writefile loop.py\n" + LOOP, timed))
    data = json.loads(notebook(SETUP, "for f in *.pt; do echo $f; loss.backward(); done\n", CLEAN_LOOP))
    data["cells"][2]["metadata"]["vscode"] = {"languageId": "shellscript"}
    (tmp_path / "vscode.ipynb").write_text(json.dumps(data, indent=1))
    data["metadata"] = {"kernelspec": {"name": "julia-1.10", "language": "julia", "display_name": "Julia"}}
    data["cells"][3]["source"] = ["for (x, y) in loader\n", "    loss.backward()\n", "end\n"]
    (tmp_path / "julia.ipynb").write_text(json.dumps(data, indent=1))
    result = torchlint("train.ipynb", "vscode.ipynb", "julia.ipynb", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "All checks passed." in result.stdout


def test_a_cell_under_time_is_linted_and_fixed_with_its_magic_kept(torchlint, tmp_path):
    path = tmp_path / "train.ipynb"
    path.write_text(notebook(SETUP, "%%time\n" + LOOP))
    assert findings(torchlint("train.ipynb", "--output-format", "json", cwd=tmp_path)) == [("TL003", 2, 4)]
    assert torchlint("--fix", "train.ipynb", cwd=tmp_path).returncode == 0
    assert json.loads(path.read_text())["cells"][2]["source"][:4] == [
        "%%time\n", "for i, (x, y) in enumerate(loader):\n", "    loss = criterion(model(x), y)\n",
        "    loss = loss / accum\n"]


def test_a_cell_that_does_not_parse_hides_nothing_in_the_others(torchlint, tmp_path):
    (tmp_path / "train.ipynb").write_text(notebook(SETUP, PASTED_LOG, LOOP, PASTED_TRACEBACK))
    result = torchlint("train.ipynb", "--output-format", "json", cwd=tmp_path)
    assert result.returncode == 1
    assert findings(result) == [("TL000", 2, 1), ("TL003", 3, 3), ("TL000", 4, 1)]
    concise = torchlint("train.ipynb", "--output-format", "concise", cwd=tmp_path).stdout.splitlines()
    assert concise[0].startswith("train.ipynb:cell 2:1:7: TL000 SyntaxError: invalid syntax")
    assert concise[1].startswith("train.ipynb:cell 3:3:5: TL003 [*]")
    assert concise[2].startswith("train.ipynb:cell 4:1:") and ": TL000 SyntaxError: " in concise[2]
    # Found in a folder too, where only files that may hold a training loop are checked.
    assert findings(torchlint(".", "--output-format", "json", cwd=tmp_path)) == findings(result)


def test_fix_leaves_a_cell_that_does_not_parse_byte_identical(torchlint, tmp_path):
    path = tmp_path / "train.ipynb"
    text = notebook(SETUP, PASTED_LOG, LOOP)
    path.write_text(text)
    diff = torchlint("--diff", "train.ipynb", cwd=tmp_path)
    assert diff.returncode == 1
    assert [line for line in diff.stdout.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")] == [
        '+    "    loss = loss / accum\\n",']
    assert path.read_text() == text
    result = torchlint("--fix", "train.ipynb", "--output-format", "concise", cwd=tmp_path)
    assert result.returncode == 1  # the pasted log is still not Python
    assert result.stdout.startswith("train.ipynb:cell 2:1:7: TL000")
    assert "TL003" not in result.stdout and "Fixed 1 problem." in result.stdout
    fixed_line = '    "    loss = loss / accum\\n",\n'
    anchor = '    "    loss = criterion(model(x), y)\\n",\n'
    assert path.read_text() == text.replace(anchor, anchor + fixed_line)
    assert torchlint("--fix", "train.ipynb", cwd=tmp_path).stdout.count("Fixed") == 0


def test_a_cell_indented_as_a_whole_is_read_as_ipython_runs_it(torchlint, tmp_path):
    """IPython strips the indentation of a cell's first line from the cell before running it: no TL000 there."""
    path = tmp_path / "train.ipynb"
    indented = "".join(" " + line if line.strip() else line for line in LOOP.splitlines(keepends=True))
    path.write_text(notebook(SETUP, indented))
    found = json.loads(torchlint("train.ipynb", "--output-format", "json", cwd=tmp_path).stdout)
    assert [(d["code"], d["cell"], d["line"], d["column"]) for d in found] == [("TL003", 2, 3, 6)]
    # The fix offered to an editor and the one --fix writes both keep the cell's own indentation.
    (edit,) = found[0]["fix"]["edits"]
    cell = indented.splitlines(keepends=True)
    line = cell[edit["line"] - 1]
    edited = line[:edit["column"] - 1] + edit["content"] + line[edit["column"] - 1:]
    assert edited == "     loss = loss / accum\n     loss.backward()\n"
    assert torchlint("--fix", "train.ipynb", cwd=tmp_path).returncode == 0
    assert json.loads(path.read_text())["cells"][2]["source"][1:4] == [
        "     loss = criterion(model(x), y)\n", "     loss = loss / accum\n", "     loss.backward()\n"]


def test_a_cell_whose_first_line_alone_is_indented_is_read_as_ipython_runs_it(torchlint, tmp_path):
    """IPython strips the first line's indentation from the lines that start with it and leaves the others, so a
    cell opening with ` def helper():` and going on at the margin runs; its fix keeps the untouched lines as they
    are, and the lines it writes run as written once IPython strips the cell's indentation again."""
    path = tmp_path / "train.ipynb"
    helper = " def scaled(v):\n     return v * 2\n\n"
    cell = helper + LOOP
    path.write_text(notebook(SETUP, cell))
    found = json.loads(torchlint("train.ipynb", "--output-format", "json", cwd=tmp_path).stdout)
    assert [(d["code"], d["cell"], d["line"]) for d in found] == [("TL003", 2, 6)]
    assert torchlint("--fix", "train.ipynb", cwd=tmp_path).returncode == 0
    written = "".join(json.loads(path.read_text())["cells"][2]["source"])
    assert written == helper + LOOP.replace("    loss.backward()\n",
                                            "    loss = loss / accum\n    loss.backward()\n")
    # What IPython runs: the first line's indentation taken off the lines that start with it.
    ran = "".join(line[1:] if line.startswith(" ") else line for line in written.splitlines(keepends=True))
    compile(ran, "cell", "exec")
    assert "   loss = loss / accum\n   loss.backward()\n" in ran
    assert torchlint("train.ipynb", cwd=tmp_path).returncode == 0


def test_a_walked_notebook_whose_only_backward_is_in_a_broken_cell_still_reports_it(torchlint, tmp_path):
    """The cell is checked with the notebook (which mentions `backward(`); leaving it out of the program must
    not make the walk skip the notebook and lose its TL000."""
    pseudo = "for x, y i DataLoader(data):\n    model.zero_grad(). # reset\n    loss(model(x), y).backward()\n"
    (tmp_path / "nb").mkdir()
    (tmp_path / "nb" / "guide.ipynb").write_text(notebook(pseudo, "print('no training here')\n"))
    found = findings(torchlint(".", "--output-format", "json", cwd=tmp_path))
    assert found == [("TL000", 1, 1)]


def test_an_edit_inserted_before_a_blank_line_of_an_indented_cell_keeps_its_indentation(torchlint, tmp_path):
    """A whole line inserted at a line's start in a cell indented as a whole gets the cell's indentation, in the
    edits an editor receives as in what --fix writes."""
    cell = ("  for i, (x, y) in enumerate(loader):\n"
            "      loss = criterion(model(x), y)\n"
            "      loss.backward()\n"
            "      optimizer.step()\n"
            "\n"
            "  print(1)\n")
    (tmp_path / "train.ipynb").write_text(notebook(SETUP, cell))
    found = json.loads(torchlint("train.ipynb", "--output-format", "json", cwd=tmp_path).stdout)
    assert [(d["code"], d["fix"]["edits"][0]["line"]) for d in found] == [("TL002", 5)]  # inserted at the blank line
    for finding in found:
        lines = cell.splitlines(keepends=True)
        for edit in sorted((finding["fix"] or {}).get("edits", []), key=lambda e: (e["line"], e["column"]),
                           reverse=True):
            start = sum(len(line) for line in lines[:edit["line"] - 1]) + edit["column"] - 1
            end = sum(len(line) for line in lines[:edit["end_line"] - 1]) + edit["end_column"] - 1
            text = "".join(lines)
            lines = (text[:start] + edit["content"] + text[end:]).splitlines(keepends=True)
        edited = "".join(lines)
        assert "\n      optimizer.zero_grad()\n" in edited
        # What the editor would write parses once IPython strips the cell's indentation, as the cell itself does.
        compile(textwrap.dedent(edited), "cell", "exec")


def test_a_cell_python_runs_but_the_parser_cannot_read_hides_nothing_and_is_no_syntax_error(torchlint, tmp_path):
    """A cell LibCST's tokenizer rejects (tabs mixed into indentation as CPython allows) is left out of the
    program: no TL000 on a cell IPython runs, and the loop of the other cells is still read."""
    tabs = ('with open("log.txt", "w") as f:\t\n\t  f.write("x")\n\t  for i in range(3):\n'
            '        # a comment\n\t\t    f.write("y")\n')
    compile(tabs, "cell", "exec")
    (tmp_path / "train.ipynb").write_text(notebook(SETUP, LOOP, tabs))
    assert findings(torchlint("train.ipynb", "--output-format", "json", cwd=tmp_path)) == [("TL003", 2, 3)]


@pytest.mark.parametrize("line", ["pip install torchviz", "pip install torchviz\n", "cd data/cifar", "ls -la",
                                  "conda install -y pytorch"])
def test_a_one_line_cell_ipython_runs_as_a_magic_without_its_percent_is_no_syntax_error(torchlint, tmp_path, line):
    """IPython's automagic: a cell of one line starting with a line magic's name runs it (`pip install x` is
    `%pip install x`). The loop of the other cells is still read."""
    (tmp_path / "train.ipynb").write_text(notebook(line, SETUP, LOOP))
    assert findings(torchlint("train.ipynb", "--output-format", "json", cwd=tmp_path)) == [("TL003", 3, 3)]


@pytest.mark.parametrize("cell", ["pip install torchviz\nimport torch\n", "x = 1\ncd data\n"])
def test_automagic_is_only_for_a_cell_of_one_line(torchlint, tmp_path, cell):
    """IPython applies automagic to a single-line cell only: in a longer cell the line is a syntax error."""
    (tmp_path / "train.ipynb").write_text(notebook(cell, SETUP, LOOP))
    found = findings(torchlint("train.ipynb", "--output-format", "json", cwd=tmp_path))
    assert [code for code, *_ in found] == ["TL000", "TL003"]
    assert found[0][1] == 1
