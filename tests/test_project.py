"""Facts across the files of a project: a loop in one file, the loss it backpropagates computed in another.

Each folder in `tests/corpus/` is a small project (`tlNNN_bug_*` / `tlNNN_trap_*`): every `.py` file in it gets
exactly the findings its `# expect: TL00N` comments name, linted from where it lies so that its imports lead
to the other files of the folder; the cache notices when one of those files changes.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from test_corpus import expected_findings
from test_lsp_project import ENGINE, MAIN, MISC
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


def test_imports_find_the_projects_package_under_src(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "src" / "tagging").mkdir(parents=True)
    (tmp_path / "src" / "tagging" / "__init__.py").write_text("")
    (tmp_path / "src" / "tagging" / "models.py").write_text("class Tagger: ...\n")
    (tmp_path / "src" / "helpers.py").write_text("")
    script = tmp_path / "examples" / "ner" / "train.py"
    script.parent.mkdir(parents=True)
    script.write_text("from tagging.models import Tagger\n")
    assert module_file(script, "tagging.models") == tmp_path / "src" / "tagging" / "models.py"
    # a module lying loose in `src/` is no package installed from it: `import helpers` does not reach it
    assert module_file(script, "helpers") is None
    # a package of that name beside the script comes first, as it does for Python
    (script.parent / "tagging").mkdir()
    (script.parent / "tagging" / "__init__.py").write_text("")
    (script.parent / "tagging" / "models.py").write_text("class Tagger: ...\n")
    assert module_file(script, "tagging.models") == script.parent / "tagging" / "models.py"


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


# --- a training step in another file: the engine.py / loss_scaler shape ------------------------------

SCALER_BUG = CORPUS / "tl003_bug_scaler_object_across_files"
OTHER_HALF = "`loss_scaler()` runs the backward and steps when `update_grad` is true (util/misc.py:11)."


def test_a_file_without_a_backward_of_its_own_is_linted_when_its_loop_runs_one_in_another_file(torchlint):
    """engine.py spells no `backward(`: walking the folder, the prefilter lets it through because main.py hands
    its `train_one_epoch` a scaler whose `__call__` (util/misc.py) runs the backward."""
    result = torchlint(".", "--output-format", "json", cwd=SCALER_BUG)
    found = [(d["path"], d["line"], d["code"]) for d in json.loads(result.stdout)]
    assert found == [("engine.py", 24, "TL003")]


def test_the_prefilter_lets_through_only_a_file_whose_calls_lead_to_a_backward(tmp_path):
    from torchlint.engine import may_train

    engine = SCALER_BUG / "engine.py"
    assert may_train(engine.read_text(), str(engine))
    quiet = CORPUS / "tl003_trap_call_without_backward" / "engine.py"  # handed an object whose call backpropagates nothing
    assert not may_train(quiet.read_text(), str(quiet))
    alone = tmp_path / "engine.py"  # the same file with nobody to hand it a scaler
    alone.write_text(engine.read_text())
    assert not may_train(alone.read_text(), str(alone))


@pytest.mark.parametrize("output", ["full", "concise", "json", "sarif"])
def test_a_finding_names_the_file_and_line_of_its_other_half_in_every_format(torchlint, output):
    result = torchlint("engine.py", "--output-format", output, "--no-cache", cwd=SCALER_BUG)
    assert result.returncode == 1, result.stderr
    text = result.stdout
    if output in ("json", "sarif"):
        data = json.loads(text)
        messages = [d["message"] for d in data] if output == "json" else \
            [r["message"]["text"] for r in data["runs"][0]["results"]]
        assert len(messages) == 1 and messages[0].endswith(OTHER_HALF), messages
    else:
        assert " ".join(text.split()).count(OTHER_HALF) == 1, text


def test_the_fix_divides_the_loss_the_loop_passes_to_the_scaler():
    """The backward runs in util/misc.py, which other callers share: the edit is in engine.py, on the argument."""
    engine = SCALER_BUG / "engine.py"
    (finding,) = lint_source(engine.read_text(), str(engine), ALL_RULES)[0]
    (edit,) = finding.fix.edits
    assert (edit.line, edit.end_line, edit.content) == (24, 24, "loss / accum_iter")
    assert engine.read_text().splitlines()[23][edit.column - 1:edit.end_column - 1] == "loss"


def test_the_findings_rest_on_the_caller_and_the_class_they_were_read_from():
    from torchlint.engine import Screened, analyse, screen

    engine = SCALER_BUG / "engine.py"
    screened = screen(engine.read_text(), str(engine))
    assert isinstance(screened, Screened)
    used = []
    analyse(screened, str(engine), ALL_RULES, dependencies=used)
    assert {Path(path).resolve() for path in used} == {(SCALER_BUG / "main.py").resolve(),
                                                       (SCALER_BUG / "util" / "misc.py").resolve()}


def test_editing_the_scaler_class_lints_the_engine_again(torchlint, tmp_path):
    project = tmp_path / "project"
    shutil.copytree(SCALER_BUG, project)
    cache = tmp_path / "cache"
    first = torchlint("engine.py", "--cache-dir", str(cache), "--output-format", "json", cwd=project)
    assert [d["code"] for d in json.loads(first.stdout)] == ["TL003"]
    misc = project / "util" / "misc.py"
    # The scaler now backpropagates a loss of its own making: what the loop passes is no longer the loss.
    misc.write_text(misc.read_text().replace("self._scaler.scale(loss)", "self._scaler.scale(loss * self.weight)"))
    second = torchlint("engine.py", "--cache-dir", str(cache), "--output-format", "json", cwd=project)
    assert json.loads(second.stdout) == []


def test_a_scaler_handed_by_callers_that_disagree_is_not_followed(tmp_path):
    """Two scripts call `train_one_epoch`, one with the scaler of util/misc.py, one with timm's: unknown, quiet;
    once both hand util/misc.py's, the loss is known to be backpropagated undivided."""
    project = tmp_path / "project"
    shutil.copytree(CORPUS / "tl003_bug_scaler_two_callers_agree", project)
    engine = project / "engine.py"
    pretrain = project / "pretrain.py"
    assert [d.code for d in lint_source(engine.read_text(), str(engine), ALL_RULES)[0]] == ["TL003"]
    pretrain.write_text(pretrain.read_text().replace("misc.NativeScalerWithGradNormCount()", "NativeScaler()")
                        .replace("import engine\n", "import engine\nfrom timm.utils import NativeScaler\n"))
    assert lint_source(engine.read_text(), str(engine), ALL_RULES)[0] == []


def test_the_index_reads_the_carriers_from_the_text_alone():
    """A method or function whose body spells a backward call, and a function calling one; not a custom
    autograd function's `def backward`, nor a call at the top level."""
    from torchlint.project.index import carriers_in

    text = (
        "class Scaler:\n"
        "    def __call__(self, loss, opt, update_grad=True):\n"
        "        self._scaler.scale(loss).backward()\n"
        "\n"
        "class Square(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def backward(ctx, grad):\n"
        "        return 2 * grad\n"
        "\n"
        "def micro_step(loss):\n"
        "    loss.backward()\n"
        "\n"
        "def train_step(model, batch):\n"
        "    micro_step(model(batch))\n"
        "\n"
        "def evaluate(model):\n"
        "    return model.eval()\n"
        "\n"
        "loss.backward()\n"
    )
    methods, functions = carriers_in(text)
    assert methods == {("Scaler", "__call__")}
    assert functions == {"micro_step", "train_step"}


def test_a_method_named_for_its_backward_is_a_carrier_unless_its_name_is_a_backward():
    """`backward_step` and `_backward` run a backward the loop does not spell; a loop's call of a method named
    `backward` or `manual_backward` is a backward by its name already."""
    from torchlint.project.index import carriers_in

    text = (
        "class Updater:\n"
        "    def backward_step(self, loss, update=True):\n"
        "        loss.backward()\n"
        "    def _backward(self, loss):\n"
        "        self.scaler.scale(loss).backward()\n"
        "    def backward(self, loss):\n"
        "        loss.backward()\n"
        "    def manual_backward(self, loss):\n"
        "        loss.backward()\n"
        "    def state_dict(self):\n"
        "        return {}\n"
    )
    assert carriers_in(text)[0] == {("Updater", "backward_step"), ("Updater", "_backward")}


UPDATER_BUG = CORPUS / "tl003_bug_updater_method_handed_in"


def _handed(project: Path, parameter: str, method: str):
    """What `ProjectFiles.handed` answers for `train_one_epoch`'s `parameter` in `project/engine.py`."""
    from torchlint.project.files import load

    module = load(project / "engine.py")
    function = module.definition("train_one_epoch")
    return module.names.project.handed(function, parameter, method)


def test_a_method_called_by_name_on_a_handed_in_object_is_its_classs_method_that_runs_the_backward(tmp_path):
    """main.py hands `train_one_epoch` a `GradUpdater`: `updater.backward_step` is that class's method in
    util/updater.py; its `state_dict` runs no backward and is not followed, nor is a method when a second
    caller hands the parameter an object of another class with a method of the same name."""
    module, method = _handed(UPDATER_BUG, "updater", "backward_step")
    assert module.path == (UPDATER_BUG / "util" / "updater.py").resolve()
    assert method.name.value == "backward_step"
    assert _handed(UPDATER_BUG, "updater", "state_dict") is None
    assert _handed(UPDATER_BUG, "model", "backward_step") is None
    assert _handed(CORPUS / "tl003_trap_updater_two_classes_same_method", "updater", "backward_step") is None
    project = tmp_path / "project"
    shutil.copytree(UPDATER_BUG, project)
    (project / ".git").mkdir()
    assert _handed(project, "updater", "backward_step") is not None
    (project / "eval.py").write_text(  # a second caller, with a class of its own whose method runs a backward
        "from engine import train_one_epoch\n\n\n"
        "class Probe:\n"
        "    def backward_step(self, loss, update=True):\n"
        "        loss.backward()\n\n\n"
        "def probe(model, loader):\n"
        "    train_one_epoch(model, loader, Probe(), 1)\n"
    )
    from torchlint.project.index import file_changed

    file_changed(str(project / "eval.py"), listed=True)
    assert _handed(project, "updater", "backward_step") is None


def test_the_prefilter_lets_through_a_loop_that_calls_a_handed_in_objects_method_that_backpropagates(tmp_path):
    from torchlint.engine import may_train

    engine = UPDATER_BUG / "engine.py"
    assert "backward(" not in engine.read_text()
    assert may_train(engine.read_text(), str(engine))
    alone = tmp_path / "engine.py"  # the same file with nobody to hand it an updater
    alone.write_text(engine.read_text())
    assert not may_train(alone.read_text(), str(alone))


@pytest.mark.parametrize("spelling", [
    ("from util.updater import GradUpdater\n", "GradUpdater(optimizer)"),
    ("from util.updater import GradUpdater as Updater\n", "Updater(optimizer)"),
    ("from util import updater as upd\n", "(upd.GradUpdater  # the one with the scaler\n        (optimizer))"),
    ("import util.updater\n", "util.updater.GradUpdater \\\n        (optimizer)"),
    ("from util.updater import (\n    GradUpdater  # the one with the scaler\n    as Updater,\n)\n",
     "Updater(optimizer)"),
])
def test_a_handed_in_object_is_found_however_its_class_is_called(tmp_path, spelling):
    """The files that may hand `train_one_epoch` an updater are read only when their text may build one: every
    spelling of a call of the class, or of its import under another name, counts."""
    from torchlint.engine import may_train

    imported, built = spelling
    project = tmp_path / "project"
    shutil.copytree(UPDATER_BUG, project)
    (project / ".git").mkdir()
    main = project / "main.py"
    main.write_text(main.read_text().replace("from util.updater import GradUpdater\n", imported)
                    .replace("GradUpdater(optimizer)", built))
    engine = project / "engine.py"
    assert may_train(engine.read_text(), str(engine))
    module, method = _handed(project, "updater", "backward_step")
    assert method.name.value == "backward_step"


def test_a_file_that_only_names_the_class_hands_nothing(tmp_path):
    """main.py names `GradUpdater` in a class statement, a comment and a string, but builds another object: no
    file hands `train_one_epoch` an object whose method backpropagates."""
    from torchlint.engine import may_train

    project = tmp_path / "project"
    shutil.copytree(UPDATER_BUG, project)
    (project / ".git").mkdir()
    main = project / "main.py"
    main.write_text(main.read_text().replace("from util.updater import GradUpdater\n", "")
                    .replace("GradUpdater(optimizer)", "Plain(optimizer)  # not GradUpdater(optimizer)")
                    + '\n\nclass GradUpdater(object):\n    """unlike GradUpdater"""\n\n\nPlain = GradUpdater\n')
    engine = project / "engine.py"
    assert not may_train(engine.read_text(), str(engine))


def test_a_class_named_before_a_long_comment_line_is_not_taken_for_a_call(tmp_path):
    """`GradUpdater  ####...#` (a rule of hashes) with no `(` after the comment: no build. (The search once tried every way of
    splitting such a comment and never finished on a file of the real-world audit.)"""
    from torchlint.project.index import _builds_any

    text = "x = GradUpdater  " + "#" * 60 + "\ny = 1\n"
    (tmp_path / "main.py").write_text(text + "z = GradUpdater  # then a call on the next line\n(optimizer)\n")
    (tmp_path / "other.py").write_text(text)
    assert _builds_any(str(tmp_path / "main.py"), frozenset({"GradUpdater"}))
    assert not _builds_any(str(tmp_path / "other.py"), frozenset({"GradUpdater"}))


def test_a_caller_is_found_through_every_spelling_of_its_import(tmp_path):
    from torchlint.project.index import ProjectIndex

    (tmp_path / "engine.py").write_text("def train_one_epoch(model, scaler):\n    pass\n")
    (tmp_path / "a.py").write_text("from engine import train_one_epoch as run\n\ndef main():\n    run(1, 2)\n")
    (tmp_path / "b.py").write_text("import engine\n\nengine.train_one_epoch(model=1, scaler=2)\n")
    (tmp_path / "c.py").write_text("from other import train_one_epoch\n\ntrain_one_epoch(1, 2)\n")  # not this one
    index = ProjectIndex.of(str(tmp_path / "engine.py"))
    found = index.callers(str(tmp_path / "engine.py"), "train_one_epoch")
    assert sorted((Path(path).name, call.callee, call.scope) for path, call in found) == [
        ("a.py", "run", "main"), ("b.py", "engine.train_one_epoch", "")]


def test_a_name_read_in_a_function_is_bound_there_or_in_the_module():
    from torchlint.project.index import NOTHING, summarize

    summary = summarize(
        "from util.misc import NativeScaler\n"
        "scaler = None\n"
        "def main(args):\n"
        "    scaler = NativeScaler()\n"
        "    def inner():\n"
        "        return scaler\n"
        "def other(scaler):\n"
        "    return scaler\n")
    assert summary.values_of("main", "scaler") == ("NativeScaler",)
    assert summary.values_of("main.inner", "scaler") == ("NativeScaler",)
    assert summary.values_of("other", "scaler") == (None,)  # a parameter: what its callers pass
    assert summary.values_of("", "scaler") == (NOTHING,)  # `None`: no object, no class
    assert summary.imports["NativeScaler"] == (0, "util.misc.NativeScaler")


def test_a_template_that_calls_into_the_projects_training_is_no_syntax_error_in_a_walk(torchlint, tmp_path):
    """A walked file with no backward of its own is read for the training it reaches in another file; its syntax
    is not judged (a cookiecutter template of engine.py, `{% if %}` around Python, is no broken program), while
    the real engine.py keeps its finding."""
    shutil.copytree(SCALER_BUG, tmp_path / "project")
    template = tmp_path / "project" / "template_engine.py"
    template.write_text(
        "from util.misc import NativeScalerWithGradNormCount as NativeScaler\n\n\n"
        "def train(model, loader, optimizer, criterion):\n"
        "    loss_scaler = NativeScaler()\n"
        "    for x, y in loader:\n"
        "{% if cookiecutter.amp %}\n"
        "        loss = criterion(model(x), y)\n"
        "{% endif %}\n"
        "        loss_scaler(loss, optimizer, parameters=model.parameters())\n")
    from torchlint.engine import may_train

    assert may_train(template.read_text(), str(template))  # read for the training it reaches in util/misc.py
    result = torchlint(".", "--output-format", "json", cwd=tmp_path / "project")
    found = [(d["path"], d["line"], d["code"]) for d in json.loads(result.stdout)]
    assert found == [("engine.py", 24, "TL003")]
    # Named on the command line, it is judged: it does not parse.
    named = torchlint("template_engine.py", "--output-format", "json", cwd=tmp_path / "project")
    assert [d["code"] for d in json.loads(named.stdout)] == ["TL000"]


DDP_BUG = CORPUS / "tl016_bug_ddp_wrapped_in_main"


def test_a_model_wrapped_in_ddp_by_the_caller_names_where_and_when():
    engine = DDP_BUG / "engine.py"
    diagnostics = lint_source(engine.read_text(), str(engine), ALL_RULES)[0]
    assert [d.code for d in diagnostics] == ["TL016"]
    assert "by `main()` (main.py:22) when `args.distributed` is set" in diagnostics[0].message


def test_the_ddp_finding_rests_on_the_file_that_wraps_the_model():
    from torchlint.engine import Screened, analyse, screen

    engine = DDP_BUG / "engine.py"
    screened = screen(engine.read_text(), str(engine))
    assert isinstance(screened, Screened)
    used = []
    analyse(screened, str(engine), ALL_RULES, dependencies=used)
    assert (DDP_BUG / "main.py").resolve() in {Path(path).resolve() for path in used}


def test_a_caller_that_stops_wrapping_or_hands_on_the_loop_silences_the_ddp_finding_and_an_unconditional_wrap_says_no_when(tmp_path):
    """The finding holds while every caller passes the DDP model; once `main.py` passes the module inside it, or
    hands `train_one_epoch` on as a value, what `model` holds in the loop is no longer known."""
    project = tmp_path / "project"
    shutil.copytree(DDP_BUG, project)
    (project / ".git").mkdir()
    engine, main = project / "engine.py", project / "main.py"
    original = main.read_text()
    assert [d.code for d in lint_source(engine.read_text(), str(engine), ALL_RULES)[0]] == ["TL016"]
    main.write_text(original.replace("train_one_epoch(model,", "train_one_epoch(model_without_ddp,"))
    assert lint_source(engine.read_text(), str(engine), ALL_RULES)[0] == []
    main.write_text(original + "\nHOOKS = [train_one_epoch]\n")
    assert lint_source(engine.read_text(), str(engine), ALL_RULES)[0] == []
    # the name in a string, as a keyword or as another object's attribute hands nothing on
    main.write_text(original + "\nlog('train_one_epoch', train_one_epoch=True, step=args.train_one_epoch)\n")
    assert [d.code for d in lint_source(engine.read_text(), str(engine), ALL_RULES)[0]] == ["TL016"]
    main.write_text(original.replace("    if args.distributed:\n", "    with torch.no_grad():\n"))
    message = lint_source(engine.read_text(), str(engine), ALL_RULES)[0][0].message
    assert "by `main()` (main.py:22) and" in message and "when `args.distributed`" not in message


DDP_FACTORY = CORPUS / "tl016_bug_ddp_factory_in_another_file"


def test_a_model_wrapped_by_a_factory_of_another_file_names_the_factory_and_rests_on_its_file():
    from torchlint.engine import Screened, analyse, screen

    train = DDP_FACTORY / "train.py"
    screened = screen(train.read_text(), str(train))
    assert isinstance(screened, Screened)
    used = []
    diagnostics = analyse(screened, str(train), ALL_RULES, dependencies=used)[0]
    ddp = [d for d in diagnostics if d.code == "TL016"]
    assert len(ddp) == 1
    assert "by `train()` (line 18, with `smart_DDP()`) when `cuda and RANK != -1` holds" in ddp[0].message
    assert (DDP_FACTORY / "utils" / "torch_utils.py").resolve() in {Path(path).resolve() for path in used}


def test_a_factory_that_hands_back_the_model_unwrapped_on_some_path_is_no_known_ddp_wrap(tmp_path):
    """`smart_DDP` wraps on every path: the loop's model is a DDP one. Once it returns the model as it is on one
    path (or wraps in `DataParallel`), the code no longer says what the loop runs."""
    project = tmp_path / "project"
    shutil.copytree(DDP_FACTORY, project)
    (project / ".git").mkdir()
    train, factory = project / "train.py", project / "utils" / "torch_utils.py"
    original = factory.read_text()

    def codes():
        return [d.code for d in lint_source(train.read_text(), str(train), ALL_RULES)[0]]

    assert codes() == ["TL016", "TL010"]
    factory.write_text(original.replace("    else:\n        return DDP(model, device_ids=[LOCAL_RANK], "
                                        "output_device=LOCAL_RANK)", "    return model"))
    assert codes() == ["TL010"]
    factory.write_text(original.replace("return DDP(", "return torch.nn.DataParallel("))
    assert codes() == ["TL010"]
    factory.write_text(original.replace("        return DDP(model, device_ids=[LOCAL_RANK], output_device=LOCAL_RANK)\n",
                                        "        wrapped = DDP(model, device_ids=[LOCAL_RANK])\n        return wrapped\n"))
    assert codes() == ["TL016", "TL010"]


def test_a_caller_wrapping_through_a_factory_of_a_third_file_makes_the_loops_model_ddp(tmp_path):
    """`main.py` wraps with `util.distributed.wrap_model`, which returns a DDP wrap: the loop in `engine.py` runs a
    DDP model when `args.distributed` is set, and the finding rests on the factory's file too. A factory that
    hands back the model itself leaves the loop's model unknown."""
    from torchlint.engine import Screened, analyse, screen

    project = tmp_path / "project"
    shutil.copytree(CORPUS / "tl016_bug_caller_wraps_through_a_factory", project)
    (project / ".git").mkdir()
    engine, factory = project / "engine.py", project / "util" / "distributed.py"
    screened = screen(engine.read_text(), str(engine))
    assert isinstance(screened, Screened)
    used = []
    diagnostics = analyse(screened, str(engine), ALL_RULES, dependencies=used)[0]
    assert [d.code for d in diagnostics] == ["TL016"]
    assert "by `main()` (main.py:12) when `args.distributed` is set" in diagnostics[0].message
    assert factory.resolve() in {Path(path).resolve() for path in used}
    factory.write_text(factory.read_text().replace("    return torch.nn.parallel.DistributedDataParallel(",
                                                   "    return model\n    torch.nn.parallel.DistributedDataParallel("))
    assert lint_source(engine.read_text(), str(engine), ALL_RULES)[0] == []


def test_the_summary_records_where_and_under_which_branches_a_name_is_bound():
    from torchlint.project.index import guard_text, summarize

    text = (
        "def main(args, net):\n"
        "    model = net.cuda()\n"
        "    if args.distributed:\n"
        "        model = DDP(model)\n"
        "    else:\n"
        "        for _ in range(2):\n"
        "            model = other(model)\n"
        "    fit(model, accum=1)\n")
    summary = summarize(text)
    sites = summary.sites_of("main", "model")
    assert [(site.value, site.line, site.guards) for site in sites] == [
        ("net.cuda", 2, ()), ("DDP", 4, ("3:7:3:23",)), ("other", 7, ("!3:7:3:23", "<loop>"))]
    assert [guard_text(text, guard) for guard in sites[2].guards[:1]] == ["not (args.distributed)"]
    call = [call for call in summary.calls if call.callee == "fit"][0]
    assert call.keywords[0][1].literal == "1" and call.guards == ()


def test_a_caller_that_accumulates_nothing_does_not_decide_what_the_loop_runs(tmp_path):
    """`accum_iter` defaults to 1: a call that leaves it out or passes 1 steps on every micro-batch, so the model it
    passes does not matter; once it accumulates with a plain model, what `model` holds is no longer known."""
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()
    script = project / "train.py"
    text = (
        "import torch\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "\n"
        "\n"
        "def run_epoch(model, loader, optimizer, accum_iter=1):\n"
        "    for i, (x, y) in enumerate(loader):\n"
        "        loss = torch.nn.functional.mse_loss(model(x), y) / accum_iter\n"
        "        loss.backward()\n"
        "        if (i + 1) % accum_iter == 0 or i + 1 == len(loader):\n"
        "            optimizer.step()\n"
        "            optimizer.zero_grad()\n"
        "\n"
        "\n"
        "def main(rank, net, loader, optimizer, args):\n"
        "    run_epoch(net, loader, optimizer, accum_iter=PLAIN)\n"
        "    model = DDP(net, device_ids=[rank])\n"
        "    run_epoch(model, loader, optimizer, args.accum_iter)\n"
    )
    for plain, codes in (("1", ["TL016"]), ("args.accum_iter", [])):
        script.write_text(text.replace("PLAIN", plain))
        found = lint_source(script.read_text(), str(script), ALL_RULES)[0]
        assert [d.code for d in found] == codes, plain


def test_an_open_text_stands_for_the_disk_and_the_kept_index_follows_it(tmp_path):
    """What the language server does with a document open in the editor: its unsaved text is read in place of
    the disk's, and the project's index, kept, is brought up to date for that file alone (no new listing)."""
    from torchlint.engine import may_train
    from torchlint.project.index import ProjectIndex, file_changed, set_open_text

    project = tmp_path / "project"
    shutil.copytree(SCALER_BUG, project)
    engine, misc = project / "engine.py", project / "util" / "misc.py"
    on_disk = misc.read_text()
    index = ProjectIndex.of(str(engine))
    assert may_train(engine.read_text(), str(engine))
    # The scaler's `__call__`, unsaved, no longer backpropagates: engine.py calls into no training.
    quiet = on_disk.replace("self._scaler.scale(loss).backward(create_graph=create_graph)", "pass")
    assert quiet != on_disk
    try:
        assert set_open_text(str(misc), quiet) and not set_open_text(str(misc), quiet)  # the same text twice
        file_changed(str(misc))
        assert ProjectIndex.of(str(engine)) is index
        assert not may_train(engine.read_text(), str(engine))
        assert lint_source(engine.read_text(), str(engine), ALL_RULES)[0] == []
        # It steps on every call: the loop no longer accumulates, and says nothing either.
        set_open_text(str(misc), on_disk.replace("        if update_grad:\n", "        if True:\n"))
        file_changed(str(misc))
        assert may_train(engine.read_text(), str(engine))
        assert lint_source(engine.read_text(), str(engine), ALL_RULES)[0] == []
    finally:
        set_open_text(str(misc), None)
        file_changed(str(misc))
    assert misc.read_text() == on_disk
    assert ProjectIndex.of(str(engine)) is index
    assert [d.code for d in lint_source(engine.read_text(), str(engine), ALL_RULES)[0]] == ["TL003"]


def test_a_created_file_is_listed_once_the_index_hears_of_it(tmp_path):
    from torchlint.project.index import ProjectIndex, file_changed

    project = tmp_path / "project"
    shutil.copytree(SCALER_BUG, project)
    engine = project / "engine.py"
    index = ProjectIndex.of(str(engine))
    extra = project / "finetune.py"
    extra.write_text("from engine import train_one_epoch\n")
    assert str(extra) not in ProjectIndex.of(str(engine)).files
    file_changed(str(extra), listed=True)
    fresh = ProjectIndex.of(str(engine))
    assert fresh is not index and str(extra) in fresh.files


def test_the_cache_notices_a_file_the_findings_did_not_rest_on_yet(torchlint, tmp_path):
    """engine.py is cached with no findings while nothing of the project runs a backward through it; a caller
    that hands it the scaler (a new main.py), then the scaler gaining its backward, each change the findings,
    though the cached entry rested on neither file. A run from a cold cache agrees each time."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "util").mkdir()
    (tmp_path / "util" / "__init__.py").write_text("")
    (tmp_path / "engine.py").write_text(ENGINE)
    misc = tmp_path / "util" / "misc.py"
    misc.write_text(MISC.replace("        self._scaler.scale(loss).backward()\n", "        self._scaler.scale(loss)\n"))
    cache = tmp_path / "cache"

    def codes(*more):
        found = torchlint("engine.py", "--output-format", "json", *more, cwd=tmp_path)
        return sorted(d["code"] for d in json.loads(found.stdout))

    assert codes("--cache-dir", str(cache)) == []
    (tmp_path / "main.py").write_text(MAIN)  # hands engine.py a scaler whose call runs no backward yet
    assert codes("--cache-dir", str(cache)) == codes("--no-cache") == []
    misc.write_text(MISC)  # now it does
    assert codes("--cache-dir", str(cache)) == codes("--no-cache") == ["TL003", "TL010"]
    (tmp_path / "main.py").unlink()  # and no file hands engine.py a scaler any more
    assert codes("--cache-dir", str(cache)) == codes("--no-cache") == []


_MODEL = "from torch import nn\n\n\nclass MetaModel(nn.Module):\n    def forward(self, x, labels):\n        return x\n"


@pytest.mark.parametrize("main, classes", [
    ("model = MetaModel(4).cuda()\nmodel = FSDP(model)\ntrain_one_epoch(model, None)", ["MetaModel"]),
    ("model = MetaModel.from_pretrained('p')\nmodel.cuda()\ntrain_one_epoch(model, None)", ["MetaModel"]),
    ("train_one_epoch(MetaModel(4), None)", ["MetaModel"]),
    ("model = build_model(4)\ntrain_one_epoch(model, None)", None),  # a factory: not followed
    ("import timm\nmodel = timm.create_model('vit')\ntrain_one_epoch(model, None)", None),  # a library's
    ("model = MetaModel(4)\ntrain_one_epoch(None, model)", None),  # not for this parameter
    ("model = MetaModel(4)\ntrain_one_epoch(*[model, None])", None),  # through *args
    ("model = MetaModel(4)\ncallbacks = [train_one_epoch]", None),  # no call, handed on as a value
])
def test_the_class_of_a_model_every_caller_in_the_project_hands_in(tmp_path, main, classes):
    from torchlint.project.files import ProjectFiles, load

    (tmp_path / "lm").mkdir()
    (tmp_path / "lm" / "__init__.py").write_text("from lm.meta import MetaModel\n")
    (tmp_path / "lm" / "meta.py").write_text(_MODEL)
    (tmp_path / "engine.py").write_text("def train_one_epoch(model, loader):\n    return model(loader, None)\n")
    (tmp_path / "main.py").write_text("from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
                                      "from engine import train_one_epoch\nfrom lm import MetaModel\n"
                                      "from util import build_model\n\n\ndef main():\n"
                                      + "".join(f"    {line}\n" for line in main.splitlines()))
    (tmp_path / "util.py").write_text("from lm.meta import MetaModel\n\n\ndef build_model(n):\n"
                                      "    return MetaModel(n)\n")
    engine = load(tmp_path / "engine.py")
    files = ProjectFiles(tmp_path / "engine.py")
    found = files.handed_classes(engine.definition("train_one_epoch"), "model")
    assert (None if found is None else [name for _, name in found]) == classes
    if classes:
        assert str(tmp_path / "main.py") in files.used


def test_an_imported_class_is_found_through_a_package_that_imports_it_again(tmp_path):
    from torchlint.project.files import ProjectFiles

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from .star import *\nfrom pkg.models import Net as Network\n")
    (tmp_path / "pkg" / "models.py").write_text("class Net:\n    pass\n")
    (tmp_path / "pkg" / "star.py").write_text("class Other:\n    pass\n")
    (tmp_path / "train.py").write_text("from pkg import Network, Other\n")
    files = ProjectFiles(tmp_path / "train.py")
    for imported, defined in ((( 0, "pkg.Network"), "Net"), ((0, "pkg.Other"), "Other")):
        module, definition = files.read_definition(imported)
        assert definition.name.value == defined
        assert str(tmp_path / "pkg" / "__init__.py") in files.used
    assert files.read_definition((0, "pkg.Missing")) is None


ENGINE_OWN_LOOPS = """\
import torch


def train_one_epoch(model, loader, optimizer):
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def backprop(model, x, y):
    torch.nn.functional.mse_loss(model(x), y).backward()


class Runner:
    def __init__(self, model):
        self.model = model

    def __call__(self, loader, optimizer):
        while True:
            loss = torch.nn.functional.mse_loss(self.model(loader.x), loader.y)
            loss.backward()
            optimizer.step()
"""


@pytest.mark.parametrize("imports, body, trains", [
    ("from engine import train_one_epoch", "train_one_epoch(model, loader, optimizer)", False),
    ("from engine import Runner", "Runner(model)(loader, optimizer)", False),
    ("from engine import backprop", "backprop(model, x, y)", True),
], ids=["a function training in its own loop", "an object whose call trains in its own loop",
        "a function backpropagating on each call"])
def test_the_prefilter_lets_through_a_loop_only_through_a_call_that_backpropagates_on_each_call(
        tmp_path, imports, body, trains):
    """main.py spells no `backward(`; its epoch loop calls into engine.py. A backward in a loop of the callee's own
    is that loop's: the epoch loop is no training loop through it, and the file is not even parsed."""
    from torchlint.engine import may_train

    (tmp_path / ".git").mkdir()
    (tmp_path / "engine.py").write_text(ENGINE_OWN_LOOPS)
    main = tmp_path / "main.py"
    main.write_text(f"{imports}\n\n\ndef main(model, loader, optimizer, x, y):\n"
                    f"    for epoch in range(10):\n        {body}\n")
    assert may_train(main.read_text(), str(main)) is trains


def test_the_prefilter_lets_through_no_loop_handed_an_object_that_trains_in_a_loop_of_its_own(tmp_path):
    """fit.py calls the `runner` main.py hands it: a `Runner`, whose `__call__` backpropagates in its own loop."""
    from torchlint.engine import may_train

    (tmp_path / ".git").mkdir()
    (tmp_path / "engine.py").write_text(ENGINE_OWN_LOOPS)
    (tmp_path / "main.py").write_text(
        "from engine import Runner\nfrom fit import fit\n\n\ndef main(model, loader, optimizer):\n"
        "    fit(Runner(model), loader, optimizer)\n")
    fit = tmp_path / "fit.py"
    fit.write_text("def fit(runner, loader, optimizer):\n    for epoch in range(10):\n"
                   "        runner(loader, optimizer)\n")
    assert not may_train(fit.read_text(), str(fit))
    (tmp_path / "engine.py").write_text(ENGINE_OWN_LOOPS.replace("        while True:\n", "        if True:\n"))
    from torchlint.project.index import file_changed

    file_changed(str(tmp_path / "engine.py"))
    assert may_train(fit.read_text(), str(fit))  # now each call of the runner backpropagates


def test_a_worker_screens_with_the_facts_it_is_handed_and_reads_no_other_file(tmp_path, monkeypatch):
    """The process that reads the files hands each worker what its index says of the file (`facts_for`): the
    carriers, those that run a backward on each call, and the file's hand-offs. A worker forked before that index
    was made keeps the same loop of `engine.py` (called with the scaler `main.py` hands it) without reading any
    other file of the project: not `main.py` for the hand-off, nor `util/misc.py` for its carrier."""
    from torchlint.engine import Screened, may_train, screen
    from torchlint.project import index

    project = tmp_path / "project"
    shutil.copytree(SCALER_BUG, project)
    (project / ".git").mkdir()
    path = str(project / "engine.py")
    text = (project / "engine.py").read_text()
    assert may_train(text, path)  # the prefilter of the process that lists the files
    facts = index.facts_for(path, text)
    made_here = screen(text, path)
    assert isinstance(made_here, Screened)

    for cached in (index._listing, index._carriers, index._running_carriers, index._read_disk, index._summary,
                   index._words):  # a process that has read nothing of the project yet
        cached.cache_clear()
    read = []
    reading = index._read_disk.__wrapped__
    monkeypatch.setattr(index, "_read_disk", lambda *key: read.append(key[0]) or reading(*key))
    spelling = index._bytes_spell_backward
    monkeypatch.setattr(index, "_bytes_spell_backward", lambda where: read.append(where) or spelling(where))
    index.adopt(facts)
    in_worker = screen(text, path)
    assert isinstance(in_worker, Screened) and in_worker.program == made_here.program
    assert read == []


def test_the_callers_of_a_function_are_read_only_from_files_that_spell_its_module(tmp_path, monkeypatch):
    """`ProjectIndex.callers` finds a function's calls through every spelling of a relative import of its module,
    and summarises no file whose only link to it is a relative import of something else (a vendored package
    whose files import one another relatively, and call a `train` of their own)."""
    from torchlint.project import index

    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "pkg").mkdir()
    (project / "vendor").mkdir()
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "engine.py").write_text("def train(model, loader):\n    for batch in loader:\n        pass\n")
    (project / "pkg" / "run.py").write_text("from . import engine\n\n\ndef main(model, loader):\n"
                                            "    engine.train(model, loader)\n")
    (project / "pkg" / "fit.py").write_text("from .engine import train as fit\n\nfit(None, [])\n")
    (project / "vendor" / "__init__.py").write_text("")
    (project / "vendor" / "a.py").write_text("from .b import helper\n\n\ndef train():\n    helper()\n\n\ntrain()\n")
    (project / "vendor" / "b.py").write_text("def helper():\n    pass\n")
    summarised = []
    summary = index.file_summary
    monkeypatch.setattr(index, "file_summary", lambda path: summarised.append(os.path.basename(path)) or summary(path))
    index._summary.cache_clear()
    found = index.ProjectIndex.of(str(project / "pkg" / "engine.py")).callers(str(project / "pkg" / "engine.py"),
                                                                               "train")
    assert sorted((os.path.basename(path), call.callee) for path, call in found) == [
        ("fit.py", "fit"), ("run.py", "engine.train")]
    assert "a.py" not in summarised and "b.py" not in summarised
