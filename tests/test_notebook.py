"""Notebooks: one program of code cells, magics masked, findings in cell lines, fixes written back."""

from __future__ import annotations

import json
import re

import libcst as cst
import pytest

from torchlint.engine import SourceText, lint_source, load_program
from torchlint.fix import fix_source
from torchlint.model import Diagnostic, Edit, Fix
from torchlint.notebook import NotebookError, map_diagnostic, read_notebook, write_back
from pathlib import Path
from torchlint.rules import ALL_RULES

# As Jupyter writes it: indent=1, sorted keys, ensure_ascii=False, a final newline.
TRAIN_NOTEBOOK = r"""{
 "cells": [
  {
   "cell_type": "markdown",
   "metadata": {},
   "source": [
    "# Training — with accumulation\n",
    "Run `loss.backward()` here."
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 1,
   "id": "setup",
   "metadata": {
    "tags": ["parameters"]
   },
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "Collecting x\n",
      "\u001b[32mdone ✓\u001b[0m\n"
     ]
    }
   ],
   "source": [
    "%matplotlib inline\n",
    "!pip install x\n",
    "import torch\n",
    "accum = 4"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 2,
   "id": "train",
   "metadata": {
    "collapsed": false
   },
   "outputs": [
    {
     "data": {
      "image/png": "iVBORw0KGgo=",
      "text/plain": [
       "<Figure size 640x480>"
      ]
     },
     "metadata": {},
     "output_type": "display_data"
    }
   ],
   "source": [
    "for i, (x, y) in enumerate(loader):\n",
    "    %time out = model(x)\n",
    "    loss = criterion(out, y)\n",
    "    loss.backward()\n",
    "    if i % accum == 0:\n",
    "        optimizer.step()\n",
    "        optimizer.zero_grad()"
   ]
  },
  {
   "cell_type": "raw",
   "metadata": {},
   "source": "not python: ((("
  },
  {
   "cell_type": "code",
   "execution_count": 3,
   "id": "timed",
   "metadata": {},
   "outputs": [],
   "source": [
    "%%time\n",
    "for epoch in range(3):\n",
    "    evaluate(model)\n"
   ]
  }
 ],
 "metadata": {
  "kernelspec": {
   "display_name": "Python 3",
   "language": "python",
   "name": "python3"
  },
  "language_info": {
   "name": "python",
   "version": "3.11.7"
  }
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
"""


def notebook_json(*cells, indent=1, **dumps) -> str:
    """A notebook of code cells (strings or lists of lines), as Jupyter would write it."""
    data = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
            for source in cells
        ],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(data, indent=indent, sort_keys=True, ensure_ascii=False, **dumps) + "\n"


def lint(notebook):
    diagnostics, problems = lint_source(notebook.source, "train.ipynb", ALL_RULES)
    assert problems == []
    return [map_diagnostic(notebook, diagnostic) for diagnostic in diagnostics]


def parses(source: str) -> bool:
    try:
        cst.parse_module(source)
    except cst.ParserSyntaxError:
        return False
    return True


def diagnostic_at(line, column, end_line, end_column, fix=None, code="TL003") -> Diagnostic:
    return Diagnostic(code, "name", "error", "message", "nb.ipynb", line, column, end_line, end_column, fix)


# --- the program ----------------------------------------------------------------------------


def test_program_is_the_code_cells_in_order_with_magics_masked():
    notebook = read_notebook(TRAIN_NOTEBOOK)
    assert [cell.number for cell in notebook.cells] == [1, 2, 3]
    assert [cell.index for cell in notebook.cells] == [1, 2, 4]
    assert [cell.id for cell in notebook.cells] == ["setup", "train", "timed"]
    lines = notebook.source.splitlines()
    # Cell 1 (4 lines), a marker, cell 2 (7 lines), a marker, cell 3 (3 lines).
    assert len(lines) == len(notebook.line_map) == 4 + 1 + 7 + 1 + 3
    assert notebook.line_map[:6] == ((1, 1), (1, 2), (1, 3), (1, 4), None, (2, 1))
    assert notebook.line_map[-3:] == ((3, 1), (3, 2), (3, 3))
    assert "%" not in notebook.source.replace("i % accum", "") and "!pip" not in notebook.source
    assert lines[2:4] == ["import torch", "accum = 4"]
    assert lines[5] == "for i, (x, y) in enumerate(loader):"
    # `%time` is the only statement before the others in the loop body: it becomes `pass`.
    assert lines[6].startswith("    pass  # ")
    # `%%time` runs its body as Python: only the magic's line is masked, the body is linted.
    assert lines[-3].startswith("# torchlint: masked magic")
    assert lines[-2:] == ["for epoch in range(3):", "    evaluate(model)"]
    assert "not python" not in notebook.source and "Training" not in notebook.source
    assert parses(notebook.source)
    assert notebook.is_python


def test_findings_are_reported_by_code_cell_and_line_within_the_cell():
    notebook = read_notebook(TRAIN_NOTEBOOK)
    found = {d.code: d for d in lint(notebook)}
    # `i % accum == 0` also leaves the micro-batches after the last step unapplied: reported up front.
    assert set(found) == {"TL003", "TL004", "TL010"}
    assert (found["TL010"].cell, found["TL010"].line) == (2, 5)

    scaled = found["TL003"]  # `loss.backward()`: line 4 of code cell 2
    assert (scaled.cell, scaled.line, scaled.column, scaled.end_line) == (2, 4, 5, 4)
    assert scaled.fix.edits == (Edit(4, 1, 4, 1, "    loss = loss / accum\n"),)

    step = found["TL004"]  # `i % accum == 0`: line 5 of code cell 2
    assert (step.cell, step.line, step.column, step.end_line, step.end_column) == (2, 5, 8, 5, 22)
    assert step.fix.edits == (Edit(5, 8, 5, 9, "(i + 1)"),)
    cell_line = notebook.cell(2).text.splitlines()[step.line - 1]
    assert cell_line[step.column - 1:step.end_column - 1] == "i % accum == 0"
    assert step.to_json()["cell"] == 2 and step.to_json()["line"] == 5


def test_cells_are_numbered_among_code_cells_only():
    text = json.dumps({"cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["loss.backward()"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": ["import torch"]},
        {"cell_type": "markdown", "metadata": {}, "source": "text"},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": [
            "for i, (x, y) in enumerate(loader):\n",
            "    criterion(model(x), y).backward()\n",
            "    if (i + 1) % accum == 0:\n",
            "        optimizer.step()\n",
        ]},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 4})
    notebook = read_notebook(text)
    (finding,) = [d for d in lint(notebook) if d.code == "TL003"]
    assert (finding.cell, finding.line) == (2, 2)


def test_statements_of_two_cells_never_merge():
    # The first cell's last line has no line break.
    notebook = read_notebook(notebook_json(["x = 1"], ["y = 2"], "z = 3"))
    assert notebook.source.splitlines()[0] == "x = 1"
    assert parses(notebook.source)
    assert [notebook.line_map[i] for i in (0, 2, 4)] == [(1, 1), (2, 1), (3, 1)]


@pytest.mark.parametrize("magic", [
    "%matplotlib inline",
    "%load_ext autoreload",
    "!pip install x",
    "!ls -la | grep '('",
    "?torch.nn",
    "??torch.nn.Linear",
    "torch.nn.Linear?",
    "model.forward??",
    "files = !ls *.pt",
    "result = %timeit -o f(x)",
    "/print 1 2",
    ",print a b",
    ";print a b",
    "%env CUDA_VISIBLE_DEVICES=0",
])
def test_line_magics_are_masked_keeping_line_numbers(magic):
    for cell in ([magic + "\n", "x = 1"], ["x = 1\n", magic], ["if ok:\n", "    " + magic + "\n", "x = 1"]):
        notebook = read_notebook(notebook_json(cell))
        assert parses(notebook.source), notebook.source
        assert len(notebook.source.splitlines()) == len(cell)
        assert magic.strip() not in notebook.source
        assert write_back(notebook, notebook.source) == notebook.text


def test_magic_alone_in_a_block_becomes_pass_and_elsewhere_a_comment():
    cell = [
        "for x in loader:\n",
        "    %time f(x)\n",
        "for x in loader:\n",
        "\n",
        "    # timing\n",
        "    %time f(x)\n",
        "    %time g(x)\n",
        "    y = h(x)\n",
        "    %time k(y)\n",
        "%time final()\n",
        "if x:\n",
        "    pass\n",
        "else:\n",
        "    !echo done\n",
    ]
    notebook = read_notebook(notebook_json(cell))
    lines = notebook.source.splitlines()
    assert parses(notebook.source), notebook.source
    assert lines[1].startswith("    pass  # torchlint: masked magic")
    assert lines[5].startswith("    pass  # torchlint: masked magic")
    for comment in (6, 8):
        assert lines[comment].startswith("    # torchlint: masked magic")
    assert lines[9].startswith("# torchlint: masked magic")
    assert lines[13].startswith("    pass  # torchlint: masked magic")
    module = cst.parse_module(notebook.source)
    # The loop body keeps its one real statement; the masked lines added no expression.
    assert "h(x)" in module.code and "final" not in module.code


def test_python_that_looks_like_a_magic_is_left_alone():
    cell = [
        "total = (steps\n",
        "         % accum)\n",
        "doc = '''\n",
        "!not a shell command\n",
        "%not a magic\n",
        "'''\n",
        "value = 3 \\\n",
        "    % 2\n",
        "ok = x != y  # really?\n",
        "s = 'what?'\n",
        "rate %= 2\n",
        "flag = a == b\n",
    ]
    notebook = read_notebook(notebook_json(cell))
    assert notebook.source == "".join(cell)
    assert notebook.cells[0].masked == ()


def test_magic_continued_with_a_backslash_is_masked_whole():
    notebook = read_notebook(notebook_json(["!pip install \\\n", "    torch numpy\n", "x = 1\n"]))
    assert parses(notebook.source)
    assert "torch numpy" not in notebook.source
    assert len(notebook.cells[0].masked) == 2


def test_cell_magic_masks_the_whole_cell():
    cell = ["%%writefile helper.py\n", "for x in y:\n", "    (\n", "\n", "%%bash extra\n", "echo hi"]
    notebook = read_notebook(notebook_json(["import os\n"], cell, ["z = 2"]))
    assert parses(notebook.source), notebook.source
    cell_lines = notebook.source.splitlines()[2:8]
    assert cell_lines[3] == ""
    assert all(line.lstrip().startswith("# torchlint: masked magic") for line in cell_lines if line)
    assert write_back(notebook, notebook.source) == notebook.text


def test_cell_magic_after_leading_blank_lines():
    notebook = read_notebook(notebook_json(["\n", "%%writefile train.py\n", "def f(:\n"]))
    assert parses(notebook.source)


# An accumulation loop whose mean loss is not divided: one finding, TL003 on `loss.backward()` (its line 3).
BUGGY_LOOP = [
    "for i, (x, y) in enumerate(loader):\n",
    "    loss = criterion(model(x), y)\n",
    "    loss.backward()\n",
    "    if (i + 1) % accum == 0 or (i + 1) == len(loader):\n",
    "        optimizer.step()\n",
    "        optimizer.zero_grad()\n",
]
# Shell, SQL or HTML that mentions a backward: linted as Python, it would not even parse.
NOT_PYTHON = [
    "for f in runs/*.log; do grep 'loss.backward()' $f; done\n",
    "SELECT loss, step FROM runs WHERE backward(x) > 0;\n",
    "<p>loss.backward() then optimizer.step()</p>\n",
]


def cell_notebook(cells, metadata=None, cell_metadata=None) -> str:
    data = json.loads(notebook_json(*cells))
    if metadata is not None:
        data["metadata"] = metadata
    for cell, extra in zip(data["cells"], cell_metadata or []):
        cell["metadata"] = extra
    return json.dumps(data, indent=1) + "\n"


@pytest.mark.parametrize("magic", ["%%time", "%%timeit -n 1 -r 1", "%%capture out --no-stderr", "%%prun -s cumtime",
                                   "%%debug", "%%memit"])
def test_cell_magics_that_run_python_have_their_body_linted(magic):
    notebook = read_notebook(notebook_json(["import torch\n"], [magic + "\n", *BUGGY_LOOP]))
    assert notebook.cell(2).linted and parses(notebook.source)
    assert [(d.code, d.cell, d.line) for d in lint(notebook)] == [("TL003", 2, 4)]
    assert write_back(notebook, notebook.source) == notebook.text


@pytest.mark.parametrize("magic", ["%%bash", "%%sh", "%%html", "%%HTML", "%%javascript", "%%js", "%%writefile run.sh",
                                   "%%latex", "%%markdown", "%%R -i df", "%%sql sqlite://", "%%script bash", "%%!",
                                   "%%python3", "%%cython", "%%time\n%%bash", "%%capture\n\n%%writefile a.txt"])
def test_cell_magics_of_another_language_keep_the_cell_out_of_the_program(magic):
    notebook = read_notebook(notebook_json(["import torch\n"], [magic + "\n", *NOT_PYTHON, "\u00a0\n"], BUGGY_LOOP))
    assert not notebook.cell(2).linted and notebook.cell(3).linted
    assert parses(notebook.source), notebook.source
    assert "backward(x)" not in notebook.source and "<p>" not in notebook.source
    assert [(d.code, d.cell) for d in lint(notebook)] == [("TL003", 3)]
    assert write_back(notebook, notebook.source) == notebook.text


@pytest.mark.parametrize("metadata, linted", [
    ({"vscode": {"languageId": "shellscript"}}, False),
    ({"vscode": {"languageId": "sql"}}, False),
    ({"dotnet_interactive": {"language": "pwsh"}}, False),
    ({"polyglot_notebook": {"kernelName": "csharp"}}, False),
    ({"vscode": {"languageId": "python"}}, True),
    ({"dotnet_interactive": {"language": "Python"}}, True),
    ({"vscode": {"languageId": ""}}, True),
    ({"vscode": "not an object"}, True),
    ({"tags": ["bash"]}, True),
])
def test_a_cell_whose_metadata_gives_another_language_is_not_linted(metadata, linted):
    cell = NOT_PYTHON if not linted else BUGGY_LOOP
    notebook = read_notebook(cell_notebook([cell, BUGGY_LOOP], cell_metadata=[metadata, {}]))
    assert notebook.cell(1).linted is linted and notebook.cell(2).linted
    assert parses(notebook.source), notebook.source
    assert [d.cell for d in lint(notebook) if d.code == "TL003"] == ([1, 2] if linted else [2])
    assert write_back(notebook, notebook.source) == notebook.text


@pytest.mark.parametrize("metadata", [
    {"kernelspec": {"display_name": "Julia 1.10", "language": "julia", "name": "julia-1.10"}},
    {"language_info": {"name": "scala"}},
    {"kernelspec": {"display_name": ".NET (C#)", "language": "C#", "name": ".net-csharp"},
     "language_info": {"name": "polyglot-notebook"}},
])
def test_a_notebook_of_another_language_is_not_linted(metadata):
    notebook = read_notebook(cell_notebook([BUGGY_LOOP], metadata=metadata))
    assert not notebook.is_python
    assert load_program(Path("train.ipynb"), SourceText(notebook.text, "utf-8", False)) is None


# Lines people paste into code cells: not Python.
TRAINING_LOG = [
    "Epoch 1/10\n",
    "391/391 [==============================] - 12s 30ms/step - loss: 1.5321 - accuracy: 0.4410\n",
    "Epoch 2/10 loss: 0.532 acc: 0.81\n",
]
TRACEBACK = [
    "---------------------------------------------------------------------------\n",
    "RuntimeError                              Traceback (most recent call last)\n",
    "Cell In[5], line 4\n",
    "----> 4     loss.backward()\n",
    "RuntimeError: Trying to backward through the graph a second time\n",
]


def program_of(text: str, walked: bool = False):
    return load_program(Path("train.ipynb"), SourceText(text, "utf-8", False), walked)


@pytest.mark.parametrize("pasted", [TRAINING_LOG, TRACEBACK, ["for x in loader:\n"], ["x = 1\n", "    indented = 1\n"],
                                    ["loss: 0.53\n", "\u00a0\n", "\u3000\n", "\x0c\n"]])
def test_a_cell_that_does_not_parse_is_left_out_and_reported_on_its_own(pasted):
    text = notebook_json(["import torch\n"], pasted, BUGGY_LOOP)
    program = program_of(text)
    cell = program.notebook.cell(2)
    assert not cell.linted and cell.syntax_error is not None
    assert parses(program.text), program.text
    assert not any(line in program.text for line in pasted if line.strip(" \x0c\n"))  # blank lines stay
    found = program.to_file(lint_source(program.text, "train.ipynb", ALL_RULES)[0])
    assert [(d.code, d.cell) for d in found] == [("TL000", 2), ("TL003", 3)]
    error = found[0]
    assert error.message.startswith("SyntaxError: ") and error.path == "train.ipynb"
    assert 1 <= error.line <= len(pasted) and error.fix is None
    assert write_back(program.notebook, program.text) == text


def test_each_cell_that_does_not_parse_gets_its_own_syntax_error_at_its_line():
    text = notebook_json(["Epoch 2/10 loss: 0.532\n"], ["x = 1\n", "y = (2,\n"], ["z = 3\n"], ["w = 4\n", "def f(:\n"])
    program = program_of(text)
    assert [(d.cell, d.line, d.column) for d in program.cell_syntax_errors] == [(1, 1, 7), (2, 2, 5), (4, 2, 7)]
    assert [cell.linted for cell in program.notebook.cells] == [False, False, True, False]


def test_a_cell_is_checked_alone_as_jupyter_runs_it():
    # `(1,` then `2)`: the joined program would parse, but neither cell runs in Jupyter.
    program = program_of(notebook_json(["x = (1,\n"], ["     2)\n"], ["z = 3\n"]))
    assert [d.cell for d in program.cell_syntax_errors] == [1, 2]


@pytest.mark.parametrize("cell", [
    ["await asyncio.sleep(1)\n"],  # IPython runs top-level await
    ["async for batch in stream:\n", "    pass\n"],
    ["def first[T](items: list[T]) -> T:\n", "    return items[0]\n"],  # Python 3.12 syntax: LibCST reads it
])
def test_code_the_running_python_rejects_but_the_linter_reads_is_not_a_syntax_error(cell):
    program = program_of(notebook_json(cell, BUGGY_LOOP))
    assert program.cell_syntax_errors == () and program.notebook.cell(1).linted


def test_cells_are_not_checked_in_a_walked_notebook_that_cannot_hold_a_training_loop():
    # Found in a folder: it is not parsed at all (`checks_syntax`), so its cells are not either; nor is its
    # program built, with nothing to analyse in it.
    assert program_of(notebook_json(TRAINING_LOG, ["x = 1\n"]), walked=True) is None
    assert program_of(notebook_json(TRAINING_LOG, BUGGY_LOOP), walked=True).cell_syntax_errors != ()


def test_fixes_go_into_their_cell_and_a_cell_that_does_not_parse_stays_byte_identical():
    log = ["Epoch 1/10 loss: 0.532 \u2193 acc: 0.81\r\n", "\tstep 3  lr=1e-4  \n", "  done"]
    text = notebook_json(log, BUGGY_LOOP)
    program = program_of(text)
    outcome = fix_source(program.text, "train.ipynb", ALL_RULES)
    assert "TL003" in {d.code for d in outcome.fixed}
    written = write_back(program.notebook, outcome.source)
    before, after = json.loads(text)["cells"], json.loads(written)["cells"]
    assert after[0] == before[0]
    assert "    loss = loss / accum\n" in after[1]["source"]
    start, end = program.notebook.cell(1).span
    assert written[:end] == text[:end]  # the log cell's JSON, byte for byte


def test_a_fix_that_reaches_into_a_cell_that_is_not_linted_is_refused():
    for cell in (TRAINING_LOG, ["%%bash\n", "echo hi\n"]):
        program = program_of(notebook_json(["import torch\n"], cell, ["x = 1\n"]))
        lines = program.text.splitlines(keepends=True)
        lines.insert(3, "y = 2\n")  # after the marker of cell 2: inside the cell that is not linted
        with pytest.raises(NotebookError, match="code cell 2, which (does not parse|is not Python)"):
            write_back(program.notebook, "".join(lines))


# --- writing back ---------------------------------------------------------------------------


def test_round_trip_without_changes_is_byte_identical():
    notebook = read_notebook(TRAIN_NOTEBOOK)
    assert write_back(notebook, notebook.source) == TRAIN_NOTEBOOK
    assert write_back(notebook, fix_source(notebook.source, "t.ipynb", [], False).source) == TRAIN_NOTEBOOK


def test_fix_changes_only_the_source_of_the_right_cell():
    notebook = read_notebook(TRAIN_NOTEBOOK)
    outcome = fix_source(notebook.source, "train.ipynb", ALL_RULES)
    assert {d.code for d in outcome.fixed} == {"TL003", "TL004"}
    written = write_back(notebook, outcome.source)

    before, after = json.loads(TRAIN_NOTEBOOK), json.loads(written)
    assert after["cells"][2]["source"] == [
        "for i, (x, y) in enumerate(loader):\n",
        "    %time out = model(x)\n",
        "    loss = criterion(out, y)\n",
        "    loss = loss / accum\n",
        "    loss.backward()\n",
        "    if (i + 1) % accum == 0:\n",
        "        optimizer.step()\n",
        "        optimizer.zero_grad()",
    ]
    after["cells"][2]["source"] = before["cells"][2]["source"]
    assert after == before  # outputs, metadata, execution counts, ids, other cells: untouched

    # The text outside that one `source` value is byte-identical: layout, escapes, unicode.
    start, end = notebook.cell(2).span
    tail = len(TRAIN_NOTEBOOK) - end
    assert written[:start] == TRAIN_NOTEBOOK[:start]
    assert written[len(written) - tail:] == TRAIN_NOTEBOOK[end:]
    assert '"\\u001b[32mdone ✓\\u001b[0m\\n"' in written
    assert written.endswith("}\n")
    # Items laid out like Jupyter's: one per line at the list's indentation.
    assert ('   "source": [\n'
            '    "for i, (x, y) in enumerate(loader):\\n",\n'
            '    "    %time out = model(x)\\n",') in written

    again = read_notebook(written)
    left = lint(again)
    assert [d.code for d in left] == [d.code for d in outcome.remaining] and not any(d.fixable() for d in left)
    assert write_back(again, fix_source(again.source, "train.ipynb", ALL_RULES).source) == written


@pytest.mark.parametrize("layout", [
    {"indent": 1},
    {"indent": 2},
    {"indent": 4},
    {"indent": "\t"},
    {"indent": None},
    {"indent": None, "separators": (",", ":")},
    {"indent": 2, "ensure_ascii": True},
])
def test_fix_keeps_the_files_layout(layout):
    ensure_ascii = layout.pop("ensure_ascii", False)
    data = json.loads(notebook_json(["# héllo\n", "import torch"], [
        "for i, (x, y) in enumerate(loader):\n",
        "    criterion(model(x), y).backward()\n",
        "    if i % accum == 0:\n",
        "        optimizer.step()\n",
        "        optimizer.zero_grad()\n",
    ]))
    data["metadata"]["author"] = "Zoë"
    text = json.dumps(data, ensure_ascii=ensure_ascii, **layout)  # no final newline this time
    notebook = read_notebook(text)
    written = write_back(notebook, fix_source(notebook.source, "nb.ipynb", ALL_RULES).source)
    fixed = [line for line in data["cells"][1]["source"]]
    fixed[1] = "    (criterion(model(x), y) / accum).backward()\n"
    fixed[2] = "    if (i + 1) % accum == 0:\n"
    data["cells"][1]["source"] = fixed
    assert written == json.dumps(data, ensure_ascii=ensure_ascii, **layout)


def test_source_as_a_single_string_is_read_and_written_back_as_a_string():
    cell = ("for i, (x, y) in enumerate(loader):\r\n"
            "    loss = criterion(model(x), y)\r\n"
            "    loss.backward()\r\n"
            "    if i % accum == 0:\r\n"
            "        optimizer.step()\r\n"
            "        optimizer.zero_grad()\r\n")
    text = notebook_json("import torch\naccum = 2\n", cell, "print('done')")
    notebook = read_notebook(text)
    assert notebook.cell(2).as_list is False
    (step,) = [d for d in lint(notebook) if d.code == "TL004"]
    assert (step.cell, step.line) == (2, 4)
    written = write_back(notebook, fix_source(notebook.source, "nb.ipynb", ALL_RULES).source)
    source = json.loads(written)["cells"][1]["source"]
    assert isinstance(source, str)
    assert source == cell.replace("i % accum", "(i + 1) % accum").replace(
        "    loss.backward()", "    loss = loss / accum\r\n    loss.backward()")
    assert json.loads(written)["cells"][2]["source"] == "print('done')"


def test_last_line_without_break_stays_without_break_and_appended_lines_keep_it():
    notebook = read_notebook(notebook_json(["a = 1\n", "b = 2"], ["c = 3\n"]))
    fixed = notebook.source.replace("b = 2\n", "b = 2\nb += 1\n").replace("c = 3\n", "c = 3\nd = 4\n")
    cells = json.loads(write_back(notebook, fixed))["cells"]
    assert cells[0]["source"] == ["a = 1\n", "b = 2\n", "b += 1"]
    assert cells[1]["source"] == ["c = 3\n", "d = 4\n"]


def test_masked_magic_reindented_by_a_fix_keeps_its_new_indentation():
    notebook = read_notebook(notebook_json(["for x in y:\n", "    %time f(x)\n", "    g(x)\n"]))
    fixed = notebook.source.replace("for x in y:\n", "for x in y:\n    with ctx():\n")
    fixed = fixed.replace("    pass  # torchlint", "        pass  # torchlint").replace("    g(x)", "        g(x)")
    (cell,) = json.loads(write_back(notebook, fixed))["cells"]
    assert cell["source"] == ["for x in y:\n", "    with ctx():\n", "        %time f(x)\n", "        g(x)\n"]


def test_empty_source_list_gets_items_at_jupyter_indentation():
    text = notebook_json([], ["x = 1"])
    notebook = read_notebook(text)
    assert notebook.line_map == (None, (2, 1))
    written = write_back(notebook, "y = 1\nz = 2\n" + notebook.source)
    assert json.loads(written)["cells"][0]["source"] == ["y = 1\n", "z = 2\n"]
    assert '   "source": [\n    "y = 1\\n",\n    "z = 2\\n"\n   ]' in written


def test_no_code_cells():
    text = json.dumps({"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# hi"}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
    notebook = read_notebook(text)
    assert notebook.source == "" and notebook.cells == ()
    assert write_back(notebook, "") == text
    assert lint(notebook) == []


def test_byte_order_mark_is_kept():
    text = "\ufeff" + notebook_json(["x = 1\n"])
    notebook = read_notebook(text)
    written = write_back(notebook, "x = 2\n")
    assert written.startswith("\ufeff") and json.loads(written[1:])["cells"][0]["source"] == ["x = 2\n"]


@pytest.mark.parametrize("change, problem", [
    (lambda s: s.replace("# torchlint: cell 2\n", ""), "boundary between code cells"),
    (lambda s: s + "# torchlint: cell 2\n", "boundary between code cells"),
    (lambda s: s.replace("b = 1\n", "b = 1\n# torchlint: cell 2\n"), "boundary between code cells"),
    (lambda s: s.replace("    pass  # torchlint: masked magic 1\n", ""),
     re.escape("removed the IPython line `%time f(x)` from code cell 1")),
    (lambda s: s + "# torchlint: masked magic 1\n", "moved or copied an IPython magic line into code cell 2"),
])
def test_write_back_refuses_when_the_cell_structure_is_lost(change, problem):
    notebook = read_notebook(notebook_json(["for x in y:\n", "    %time f(x)\n", "b = 1\n"], ["c = 2\n"]))
    with pytest.raises(NotebookError, match=problem):
        write_back(notebook, change(notebook.source))


# --- mapping positions ----------------------------------------------------------------------


def test_positions_on_a_marker_or_past_the_end_mean_the_end_of_the_cell_before():
    notebook = read_notebook(notebook_json(["a = 1\n", "b = 2\n"], ["c = 3"]))
    # Line 3 is the marker; an edit inserting after cell 1's last statement starts there.
    insert = Fix("safe", "insert", (Edit(3, 1, 3, 1, "d = 4\n"),))
    mapped = map_diagnostic(notebook, diagnostic_at(2, 1, 2, 6, insert))
    assert (mapped.cell, mapped.line, mapped.end_line) == (1, 2, 2)
    assert mapped.fix.edits == (Edit(3, 1, 3, 1, "d = 4\n"),)
    # Past the end of the program: the end of the last cell.
    mapped = map_diagnostic(notebook, diagnostic_at(4, 1, 4, 6, Fix("safe", "x", (Edit(5, 1, 5, 1, "e\n"),))))
    assert (mapped.cell, mapped.line) == (2, 1)
    assert mapped.fix.edits == (Edit(2, 1, 2, 1, "e\n"),)
    # The start of a finding on the marker lands on the last line of the cell before.
    mapped = map_diagnostic(notebook, diagnostic_at(3, 1, 3, 2))
    assert (mapped.cell, mapped.line, mapped.column) == (1, 2, 6)


def test_a_fix_reaching_into_another_cell_is_dropped_from_the_mapped_finding():
    notebook = read_notebook(notebook_json(["a = 1\n"], ["c = 3\n"]))
    fix = Fix("safe", "both", (Edit(3, 1, 3, 2, "C"), Edit(1, 1, 1, 2, "A")))
    mapped = map_diagnostic(notebook, diagnostic_at(3, 1, 3, 6, fix))
    assert mapped.cell == 2 and mapped.fix is None
    # Across the marker in one edit.
    fix = Fix("safe", "across", (Edit(1, 1, 3, 1, ""),))
    assert map_diagnostic(notebook, diagnostic_at(1, 1, 1, 6, fix)).fix is None


def test_syntax_error_is_reported_in_its_cell():
    notebook = read_notebook(notebook_json(["import torch\n"], ["x = (1,\n", "y = 2\n"], ["loss.backward()\n"]))
    (error,) = lint(notebook)
    assert error.code == "TL000" and error.cell == 2 and error.line == 1


# --- not a notebook -------------------------------------------------------------------------


@pytest.mark.parametrize("text, problem", [
    ('{"cells": [', r"not valid JSON: Expecting value \(line 1, column 12\)"),
    ("", r"not valid JSON: Expecting value \(line 1, column 1\)"),
    ('{\n "cells": []\n}\n}', r"not valid JSON: Extra data \(line 4, column 1\)"),
    ("[1, 2]", "not a Jupyter notebook: the JSON is a list, not an object with a `cells` list"),
    ('{"metadata": {}}', "not a Jupyter notebook: no `cells` key, expected a list of cells"),
    ('{"cells": {"a": 1}}', "not a Jupyter notebook: `cells` is an object, expected a list of cells"),
    ('{"worksheets": [], "nbformat": 3}', "nbformat 3 notebooks are not supported"),
    ('{"cells": [1]}', "not a Jupyter notebook: cell 1 is a number, not an object"),
    ('{"cells": [{"cell_type": "code", "source": [1]}]}', "code cell 1 .*`source` must be a string or a list"),
    ('{"cells": [{"cell_type": "code"}]}', "code cell 1 .* has no `source`"),
])
def test_not_a_notebook_is_a_clear_error(text, problem):
    with pytest.raises(NotebookError, match=problem):
        read_notebook(text)


def test_language_of_the_kernel():
    data = json.loads(notebook_json(["x <- 1"]))
    data["metadata"] = {"kernelspec": {"language": "R", "name": "ir"}}
    assert not read_notebook(json.dumps(data)).is_python
    data["metadata"] = {}
    assert read_notebook(json.dumps(data)).is_python
