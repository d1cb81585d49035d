"""The screen (`torchlint.engine.screen`) hands LibCST only the loops that may train, judged on CPython's tree: a
loop that calls a function of the file counts only when that function may run a backward on every call (the work
`torchlint.training.calls.Functions.runs` reads: outside its loops and `except` handlers, under an `if` only on one
of its parameters, in a function that returns only at its end) or may be the loop's body (a method that steps under
an `if`); a loop calling a function or object of another file only when the call may run one that backpropagates
(`Functions.remote`); and a loop calling `training_step` counts as calling the Hugging Face `Trainer`'s only in a
file with a class that may subclass something of `transformers`. Whatever it leaves out, the findings are those of
a whole parse with the screen off."""

from __future__ import annotations

import textwrap
from typing import Tuple

import pytest

from conftest import lint_findings
from torchlint.engine import Screened, screen


def _screened(text: str, path: str, monkeypatch):
    monkeypatch.delenv("TORCHLINT_NO_PREFILTER", raising=False)
    return screen(text, path)


def _loop_calling(helper: str) -> str:
    """`LOOP` with `helper` (a function `update`, and what it calls) defined above it."""
    return textwrap.dedent(LOOP.format(helper=textwrap.indent(textwrap.dedent(helper), "    ")))


def _project_loop(tmp_path, imports: str, call: str) -> Tuple[str, str]:
    """`PROJECT_LOOP` written as `main.py` beside `util.py` (`CARRIERS`) in `tmp_path`: its text and path."""
    (tmp_path / "util.py").write_text(CARRIERS, encoding="utf-8")
    main = tmp_path / "main.py"
    text = textwrap.dedent(PROJECT_LOOP.format(imports=imports, call=call))
    main.write_text(text, encoding="utf-8")
    return text, str(main)


HELPERS = {
    "early return": """\
        def update(model, optimizer, x, y):
            if x is None:
                return None
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
    """,
    "early return in a try in a with": """\
        def update(model, optimizer, x, y):
            with torch.enable_grad():
                try:
                    if x is None:
                        return None
                finally:
                    pass
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
    """,
    "an await in an expression": """\
        async def update(model, optimizer, x, y):
            loss = torch.nn.functional.mse_loss(model(await x), y)
            loss.backward()
    """,
    "a generator": """\
        def update(model, optimizer, x, y):
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            yield loss
    """,
    "under a test of other than a parameter": """\
        def update(model, optimizer, x, y):
            loss = torch.nn.functional.mse_loss(model(x), y)
            if model.training:
                loss.backward()
    """,
    "in an elif after a test of a parameter": """\
        def update(model, optimizer, x, y, dry_run=False):
            loss = torch.nn.functional.mse_loss(model(x), y)
            if dry_run:
                pass
            elif model.training:
                loss.backward()
    """,
    "in an except handler": """\
        def update(model, optimizer, x, y):
            try:
                pass
            except RuntimeError:
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
    """,
}

LOOP = """\
    import torch


{helper}

    def train(model, optimizer, loader):
        for i, (x, y) in enumerate(loader):
            update(model, optimizer, x, y)
            if i % 4 == 0:
                optimizer.step()
"""


@pytest.mark.parametrize("helper", HELPERS.values(), ids=HELPERS.keys())
def test_a_loop_whose_helper_runs_no_backward_on_every_call_never_reaches_libcst(monkeypatch, helper):
    text = _loop_calling(helper)
    assert not isinstance(_screened(text, "train.py", monkeypatch), Screened)
    assert lint_findings(text, monkeypatch, whole=False) == lint_findings(text, monkeypatch, whole=True) == []


RUNNING = {
    "on every call": """\
        def update(model, optimizer, x, y):
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            return loss
    """,
    "under a parameter": """\
        def update(model, optimizer, x, y, backprop=True):
            loss = torch.nn.functional.mse_loss(model(x), y)
            if backprop:
                loss.backward()
    """,
    "in the else of a test of a parameter": """\
        def update(model, optimizer, x, y, dry_run=False):
            loss = torch.nn.functional.mse_loss(model(x), y)
            if dry_run:
                pass
            else:
                loss.backward()
    """,
    "inside with and try": """\
        def update(model, optimizer, x, y):
            with torch.autocast("cpu"):
                try:
                    loss = torch.nn.functional.mse_loss(model(x), y)
                finally:
                    loss.backward()
    """,
    "through a helper of its own": """\
        def backprop(loss):
            loss.backward()


        def update(model, optimizer, x, y):
            backprop(torch.nn.functional.mse_loss(model(x), y))
    """,
}


def test_a_loop_calling_a_function_that_trains_in_a_loop_of_its_own_is_no_training_loop(monkeypatch):
    """The helper's loop trains (it is analysed); the loop that calls it runs no backward on the helper's calls, so
    its `i % 4 == 0` is no accumulation step (no TL004), with the screen on or off."""
    helper = """\
        def update(model, optimizer, x, y):
            for part in range(2):
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
    """
    text = _loop_calling(helper)
    findings = lint_findings(text, monkeypatch, whole=False)
    assert findings == lint_findings(text, monkeypatch, whole=True)
    assert "TL004" not in [code for code, *_ in findings]


@pytest.mark.parametrize("helper", RUNNING.values(), ids=RUNNING.keys())
def test_a_loop_whose_helper_runs_a_backward_on_every_call_is_analysed(monkeypatch, helper):
    """Traps for the screen: each of these helpers runs its backward on the loop's calls; `i % 4 == 0` steps after
    the first micro-batch (TL004), found as with the screen off."""
    text = _loop_calling(helper)
    assert isinstance(_screened(text, "train.py", monkeypatch), Screened)
    findings = lint_findings(text, monkeypatch, whole=False)
    assert findings == lint_findings(text, monkeypatch, whole=True)
    assert "TL004" in [code for code, *_ in findings]


TRAINER = """\
    {imports}


    class {header}:
        def training_step(self, model, inputs):
            if self.args.use_sagemaker:
                return self.sagemaker_step(model, inputs)
            loss = self.compute_loss(model, inputs)
            loss.backward()
            return loss.detach()

        def train(self):
            model = self.model
            for step, inputs in enumerate(self.get_train_dataloader()):
                self.training_step(model, inputs)
                if (step + 1) % self.args.gradient_accumulation_steps == 0:
                    self.optimizer.step()
                    model.zero_grad()
"""


def test_a_copy_of_the_hugging_face_trainer_never_reaches_libcst(monkeypatch):
    """A file that copies the `Trainer`'s code (its own `training_step`, which may return early, and the loop that
    calls it) inherits nothing from `transformers`, although it imports from it."""
    text = textwrap.dedent(TRAINER.format(imports="from transformers.trainer_utils import EvalPrediction",
                                          header="Trainer"))
    assert not isinstance(_screened(text, "train.py", monkeypatch), Screened)
    assert lint_findings(text, monkeypatch, whole=False) == lint_findings(text, monkeypatch, whole=True) == []


SUBCLASSES = {
    "imported name": ("from transformers import Trainer", "ContrastiveTrainer(Trainer)"),
    "renamed": ("from transformers import Trainer as HFTrainer", "ContrastiveTrainer(HFTrainer)"),
    "module attribute": ("import transformers", "ContrastiveTrainer(transformers.Trainer)"),
    "renamed module": ("import transformers as tf", "ContrastiveTrainer(tf.Seq2SeqTrainer)"),
}

INHERITED = """\
    {imports}


    class {header}:
        def train(self):
            model = self.model
            for step, inputs in enumerate(self.get_train_dataloader()):
                self.training_step(model, inputs)
                if (step + 1) % self.args.gradient_accumulation_steps == 0:
                    self.optimizer.step()
                    model.zero_grad()
"""


@pytest.mark.parametrize("imports, header", SUBCLASSES.values(), ids=SUBCLASSES.keys())
def test_a_subclass_of_the_hugging_face_trainer_is_analysed_however_its_base_is_spelled(monkeypatch, imports, header):
    """The loop calls the `training_step` the class inherits, which backpropagates: the trailing window (TL010)."""
    text = textwrap.dedent(INHERITED.format(imports=imports, header=header))
    assert isinstance(_screened(text, "train.py", monkeypatch), Screened)
    findings = lint_findings(text, monkeypatch, whole=False)
    assert findings == lint_findings(text, monkeypatch, whole=True)
    assert [code for code, *_ in findings] == ["TL010"]


CARRIERS = textwrap.dedent(
    """\
    def mean(values, loss=None):
        if loss is not None:
            loss.backward()
        return sum(values) / len(values)


    class Trainer:
        def fit(self, loss):
            loss.backward()

        def train(self):
            return self
    """
)

PROJECT_LOOP = """\
    import torch
    {imports}


    def main(loader, history):
        trainer = Trainer()
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(x, y)
            {call}
"""

OTHER_FILE_CALLS = {
    "a method no carrier class runs a backward in": ("from util import Trainer", "trainer.train()"),
    "a carrier function's name as another object's method": ("from util import mean", "history.mean()"),
}


@pytest.mark.parametrize("imports, call", OTHER_FILE_CALLS.values(), ids=OTHER_FILE_CALLS.keys())
def test_a_loop_spelling_a_carriers_name_in_a_call_that_cannot_run_it_never_reaches_libcst(
        monkeypatch, tmp_path, imports, call):
    """`util.py` has a function `mean` and a method `Trainer.fit` that run a backward: the loop's call names one
    of them, or an object built from the class, but runs neither (`Functions.remote` finds nothing)."""
    assert not isinstance(_screened(*_project_loop(tmp_path, imports, call), monkeypatch), Screened)


CARRIER_CALLS = {
    "imported function": ("from util import mean, Trainer", "mean([1.0], loss)"),
    "renamed function": ("from util import mean as average, Trainer", "average([1.0], loss)"),
    "function of an imported module": ("import util\n    from util import Trainer", "util.mean([1.0], loss)"),
    "carrier method of a built object": ("from util import Trainer", "trainer.fit(loss)"),
}


@pytest.mark.parametrize("imports, call", CARRIER_CALLS.values(), ids=CARRIER_CALLS.keys())
def test_a_loop_calling_a_function_or_method_of_another_file_that_runs_a_backward_is_analysed(
        monkeypatch, tmp_path, imports, call):
    assert isinstance(_screened(*_project_loop(tmp_path, imports, call), monkeypatch), Screened)


WINDOWED = textwrap.dedent(
    """\
    import torch


    class Learner:
        def __init__(self, model, accum=4):
            self.model = model
            self.opt = torch.optim.SGD(model.parameters(), lr=0.1)
            self.accum = accum
            self.n_iter = 0

        def optimize(self, x, y):
            if x is None:
                return None
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            loss.backward()
            self.n_iter += 1
            if self.n_iter % self.accum == 0:
                self.opt.step()
                self.opt.zero_grad()


    def train(learner, loader):
        for x, y in loader:
            learner.optimize(x, y)
    """
)


def test_a_method_that_is_a_loops_body_is_analysed_though_it_may_return_early(monkeypatch):
    """A method that runs a backward and steps under an `if` on a counter of its object is the body of the loop
    that calls it (`training.loop.windowed_methods`), whatever else it does: its early `return` does not keep it
    from LibCST. The undivided mean loss of its window is found as with the screen off."""
    assert isinstance(_screened(WINDOWED, "train.py", monkeypatch), Screened)
    findings = lint_findings(WINDOWED, monkeypatch, whole=False)
    assert findings == lint_findings(WINDOWED, monkeypatch, whole=True)
    assert "TL003" in [code for code, *_ in findings]


EPOCH_LOOP = """\
    import torch
    {imports}


    def main(model, loader, optimizer, epochs):
        runner = Runner(model)
        for epoch in range(epochs):
            {call}
"""

# Functions and methods whose backward is the body of a loop of their own: a call runs many backwards, and the loop
# calling it once an epoch is no training loop through it (`Functions.runs` reads nothing in a loop of theirs).
OWN_LOOPS = textwrap.dedent(
    """\
    import torch


    class Scaler:
        def __call__(self, loss, optimizer):
            loss.backward()
            optimizer.step()


    def train_one_epoch(model, loader, optimizer, scaler=None):
        \"\"\"One epoch.

    for x, y in loader:
        \"\"\"
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            if scaler is not None:
                scaler(loss, optimizer)
            else:
                loss.backward()  # a loop's backward
                optimizer.step()


    def train_steps(model, data, optimizer, steps):
        it = iter(data)
        while steps > 0:
            x, y = next(it)
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            steps -= 1


    class Runner:
        def __init__(self, model):
            self.model = model

        def run(self, loader, optimizer):
            for x, y in loader:
                loss = torch.nn.functional.mse_loss(self.model(x), y)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
    """
)

OWN_LOOP_CALLS = {
    "a function training over its batches": ("from engine import train_one_epoch, Scaler",
                                            "train_one_epoch(model, loader, optimizer, Scaler())"),
    "a function training in a while loop": ("from engine import train_steps", "train_steps(model, loader, optimizer, 10)"),
    "a method training over its batches": ("from engine import Runner", "runner.run(loader, optimizer)"),
    "a function of an imported module": ("import engine\n    from engine import Runner",
                                         "engine.train_one_epoch(model, loader, optimizer)"),
}


@pytest.mark.parametrize("imports, call", OWN_LOOP_CALLS.values(), ids=OWN_LOOP_CALLS.keys())
def test_an_epoch_loop_calling_another_files_function_that_trains_in_its_own_loop_never_reaches_libcst(
        monkeypatch, tmp_path, imports, call):
    """`engine.py` backpropagates only in the loops of its functions and methods (and in a `Scaler.__call__`,
    which runs a backward on each call: an object's call it may be, an imported function's it is not); `main.py`
    calls one of them once an epoch. No loop of `main.py` trains, whole or screened."""
    (tmp_path / "engine.py").write_text(OWN_LOOPS, encoding="utf-8")
    main = tmp_path / "main.py"
    text = textwrap.dedent(EPOCH_LOOP.format(imports=imports, call=call))
    main.write_text(text, encoding="utf-8")
    assert not isinstance(_screened(text, str(main), monkeypatch), Screened)
    assert lint_findings(text, monkeypatch, whole=True, path=str(main)) == []


# Functions whose backward runs on each call though a loop's lines stand near it, as the layout shows them.
EACH_CALL = {
    "after a loop": """\
        def step(model, batches, optimizer):
            for x, y in batches:
                x = x.float()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
    """,
    "after a line continued further left": """\
        def step(model, batches, optimizer):
            for x, y in batches:
                pass
            loss = torch.nn.functional.mse_loss(
        model(x), y)
            loss.backward()
    """,
    "below a docstring that spells a loop": """\
        def step(model, batches, optimizer):
            \"\"\"Backpropagate the last batch of:
        for x, y in batches:
            \"\"\"
            x, y = batches[-1]
            torch.nn.functional.mse_loss(model(x), y).backward()
    """,
}


@pytest.mark.parametrize("helper", EACH_CALL.values(), ids=EACH_CALL.keys())
def test_an_epoch_loop_calling_another_files_function_that_backpropagates_on_each_call_is_analysed(
        monkeypatch, tmp_path, helper):
    engine = "import torch\n\n\n" + textwrap.dedent(helper)
    assert _screened_findings(tmp_path, monkeypatch, engine, "from engine import step",
                              "step(model, batches, optimizer)") == ["TL004", "TL010"]


def _screened_findings(tmp_path, monkeypatch, engine: str, imports: str, call: str,
                       before: str = "pass") -> list:
    """The codes found in `main.py`, whose loop makes `call` (imported by `imports` from `engine.py`, whose text is
    `engine`; after `before`) and steps when `i % accum == 0`; after checking that the screen keeps the loop, and
    finds what a whole parse does."""
    (tmp_path / "engine.py").write_text(engine, encoding="utf-8")
    main = tmp_path / "main.py"
    text = textwrap.dedent(f"""\
        import torch
        {imports}


        def main(model, loader, optimizer, accum):
            {before}
            for i, batches in enumerate(loader):
                {call}
                if i % accum == 0:
                    optimizer.step()
                    optimizer.zero_grad()
    """)
    main.write_text(text, encoding="utf-8")
    assert isinstance(_screened(text, str(main), monkeypatch), Screened)
    findings = lint_findings(text, monkeypatch, whole=False, path=str(main))
    assert findings == lint_findings(text, monkeypatch, whole=True, path=str(main))
    return [code for code, *_ in findings]


def test_an_epoch_loop_calling_a_method_that_trains_in_its_own_loop_and_backpropagates_after_it_is_analysed(
        monkeypatch, tmp_path):
    """`Runner.run` backpropagates in its own loop, and, after it, calls `self.finish`, which runs a backward on
    each call: a call of `run` runs one too (the analysis follows `finish` from `run`)."""
    engine = textwrap.dedent("""\
        import torch


        class Runner:
            def __init__(self, model):
                self.model = model

            def run(self, loader, optimizer):
                for x, y in loader:
                    torch.nn.functional.mse_loss(self.model(x), y).backward()
                self.finish(x, y)

            def finish(self, x, y):
                loss = torch.nn.functional.mse_loss(self.model(x), y)
                loss.backward()
    """)
    assert _screened_findings(tmp_path, monkeypatch, engine, "from engine import Runner",
                              "runner.run(batches, optimizer)", before="runner = Runner(model)") == ["TL004", "TL010"]


def _loops_with_and_without_trainers(screened: Screened, path: str):
    """The training loops the facts find in the screened program, told the screen's `trainers` and not: each as its
    body (an update function's loop is built afresh, around the function's own body)."""
    from torchlint.context import FileContext
    from torchlint.parse import parse_module

    module = parse_module(screened.program)
    told = FileContext(path, screened.text, module, screened.statement_lines, screened.program, screened.trainers)
    untold = FileContext(path, screened.text, module, screened.statement_lines, screened.program, None)
    return [id(loop.node.body) for loop in told.loops], [id(loop.node.body) for loop in untold.loops]


def test_the_screen_names_what_a_loop_must_call_to_train_and_the_facts_pass_over_the_others(monkeypatch):
    """A file with a loop that trains through a helper and loops that cannot train: the screen keeps the first and
    names `update` among the trainers; the facts, told the trainers, pass over the others without following their
    calls, and find the same loops as when not told."""
    text = _loop_calling(RUNNING["through a helper of its own"]) + textwrap.dedent("""\


        def evaluate(model, loader):
            for x, y in loader:
                print(model(x).mean().item())
    """)
    screened = _screened(text, "train.py", monkeypatch)
    assert isinstance(screened, Screened)
    assert {"update", "backward", "grad"} <= screened.trainers and "evaluate" not in screened.trainers
    told, untold = _loops_with_and_without_trainers(screened, "train.py")
    assert told == untold and len(told) == 1  # the helper's caller; `evaluate`'s loop trains nothing


def test_no_trainers_are_named_when_every_loop_may_train(monkeypatch):
    """Every loop of the file is kept: nothing for the facts to pass over."""
    text = _loop_calling(RUNNING["on every call"])
    screened = _screened(text, "train.py", monkeypatch)
    assert isinstance(screened, Screened) and screened.trainers is None


def test_the_facts_told_the_screens_trainers_find_the_loops_they_find_untold_across_the_corpus(monkeypatch):
    """Over every file of the corpus, the examples and the fixtures that the screen hands on with trainers named:
    the same training loops with them as without (the screen's test is a superset of the facts')."""
    from conftest import REPO

    checked = 0
    for path in sorted(REPO.glob("tests/corpus/**/*.py")) + sorted(REPO.glob("examples/*.py")) \
            + sorted(REPO.glob("fixtures/**/*.py")):
        screened = _screened(path.read_text(encoding="utf-8"), str(path), monkeypatch)
        if not isinstance(screened, Screened) or screened.trainers is None:
            continue
        checked += 1
        told, untold = _loops_with_and_without_trainers(screened, str(path))
        assert told == untold, path
    assert checked > 100  # about 150 files name trainers
