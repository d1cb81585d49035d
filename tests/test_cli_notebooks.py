"""Notebooks through the real command: findings per cell, fixes written back into the cells, bad JSON."""

from __future__ import annotations

import json
from pathlib import Path


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
