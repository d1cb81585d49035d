"""Facts across the files of a project: a loop in one file, the loss it backpropagates computed in another.

Each folder in `tests/corpus/` is a small project (`tlNNN_bug_*` / `tlNNN_trap_*`): every `.py` file in it gets
exactly the findings its `# expect: TL00N` comments name, linted from where it lies so that its imports lead
to the other files of the folder; the cache notices when one of those files changes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from test_corpus import expected_findings
from torchlint.engine import lint_source
from torchlint.project.imports import module_file
from torchlint.rules import ALL_RULES

CORPUS = Path(__file__).resolve().parent / "corpus"
PROJECTS = sorted(path for path in CORPUS.iterdir() if path.is_dir())
FILES = [file for project in PROJECTS for file in sorted(project.rglob("*.py"))]


def test_the_corpus_has_multi_file_bugs_and_traps():
    kinds = {project.name.split("_")[1] for project in PROJECTS}
    assert kinds == {"bug", "trap"}


@pytest.mark.parametrize("path", FILES, ids=[str(path.relative_to(CORPUS)) for path in FILES])
def test_project_file_gets_exactly_the_expected_findings(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    diagnostics, problems = lint_source(text, str(path), ALL_RULES)
    assert not problems, [problem.message for problem in problems]
    found = {(d.line, d.code): d.message for d in diagnostics}
    assert set(found) == expected_findings(text), found


def test_imports_lead_to_the_projects_own_files():
    engine = CORPUS / "tl003_bug_relative_import_mean" / "trainer" / "engine.py"
    assert module_file(engine, "losses", level=1) == engine.parent / "losses.py"
    script = CORPUS / "tl003_trap_loss_object_sums_batch" / "train.py"
    assert module_file(script, "utils.loss") == script.parent / "utils" / "loss.py"
    assert module_file(script, "torch") is None  # an installed package is not the project's


def test_a_file_named_alone_still_reads_its_imports(torchlint):
    project = CORPUS / "tl003_bug_loss_object_mean"
    result = torchlint(str(project / "train.py"), "--output-format", "json", "--no-cache")
    assert [(d["code"], d["line"]) for d in json.loads(result.stdout)] == [("TL003", 17)]
    assert "`compute_loss`" in json.loads(result.stdout)[0]["message"]


def test_the_cache_notices_a_change_in_a_file_the_finding_rests_on(torchlint, tmp_path):
    project = tmp_path / "project"
    shutil.copytree(CORPUS / "tl003_trap_loss_object_sums_batch", project)
    cache = tmp_path / "cache"
    first = torchlint("train.py", "--cache-dir", str(cache), "--output-format", "json", cwd=project)
    assert json.loads(first.stdout) == []
    loss = project / "utils" / "loss.py"
    loss.write_text(loss.read_text().replace("return loss * bs,", "return loss,"))
    second = torchlint("train.py", "--cache-dir", str(cache), "--output-format", "json", cwd=project)
    assert [d["code"] for d in json.loads(second.stdout)] == ["TL003"]


def test_a_loss_reached_two_files_away_through_a_submodule_import(torchlint, tmp_path):
    """`from utils import lossfns`, whose function returns what `utils/core.py` computes: the cache rests on both."""
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("")
    (tmp_path / "utils" / "core.py").write_text(
        "import torch.nn.functional as F\n\n\ndef base_loss(logits, y):\n    return F.cross_entropy(logits, y)\n")
    (tmp_path / "utils" / "lossfns.py").write_text(
        "from utils.core import base_loss\n\n\ndef compute(logits, y):\n    return base_loss(logits, y)\n")
    (tmp_path / "train.py").write_text(
        "from utils import lossfns\n\n\ndef train(model, loader, opt, accum):\n"
        "    for i, (x, y) in enumerate(loader):\n"
        "        loss = lossfns.compute(model(x), y)\n"
        "        loss.backward()\n"
        "        if (i + 1) % accum == 0 or i + 1 == len(loader):\n"
        "            opt.step()\n"
        "            opt.zero_grad()\n")
    cache = tmp_path / "cache"
    first = torchlint("train.py", "--cache-dir", str(cache), "--output-format", "json", cwd=tmp_path)
    assert [(d["code"], d["line"]) for d in json.loads(first.stdout)] == [("TL003", 7)]
    core = tmp_path / "utils" / "core.py"
    core.write_text(core.read_text().replace("F.cross_entropy(logits, y)", "F.cross_entropy(logits, y, reduction='sum')"))
    second = torchlint("train.py", "--cache-dir", str(cache), "--output-format", "json", cwd=tmp_path)
    assert json.loads(second.stdout) == []
