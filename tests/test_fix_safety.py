"""Fixing never loses data: encodings, line endings and modes survive; broken or failed writes change nothing;
a crashing rule is reported and the other rules and files still run."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import libcst as cst
import pytest

from torchlint import cli
from torchlint.engine import SourceText, lint_source
from torchlint.fix import WriteRefused, fix_source, write_atomically
from torchlint.model import SAFE, Edit, Fix
from torchlint.rules import ALL_RULES, Finding, Rule
from conftest import ACCUMULATION_BUG, ACCUMULATION_FIXED_LINE

BUG, FIXED_LINE = ACCUMULATION_BUG, ACCUMULATION_FIXED_LINE  # TL003 at line 3, column 5
REPO = Path(__file__).resolve().parent.parent
# Programs that are right: the corpus's traps, the clean example, the fixtures' reference scripts.
CORRECT_PROGRAMS = (sorted((REPO / "tests" / "corpus").glob("tl*_trap_*.py")) + [REPO / "examples" / "clean_training.py"]
                    + sorted((REPO / "fixtures").glob("*/reference.py")))


def test_safe_fixes_never_change_a_correct_program(torchlint, tmp_path):
    """`--fix` over correct code writes nothing: every byte of every trap and reference script stays."""
    copies = {}
    for original in CORRECT_PROGRAMS:
        copy = tmp_path / f"{original.parent.name}_{original.name}"
        shutil.copyfile(original, copy)
        copies[copy] = original
    assert len(copies) > 80
    result = torchlint("--fix", str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    changed = [original.name for copy, original in copies.items() if copy.read_bytes() != original.read_bytes()]
    assert changed == []


def test_safe_fixes_never_change_a_correct_project(torchlint, tmp_path):
    """The corpus's multi-file traps (folders: a loop in one file, its loss in another) stay byte for byte too."""
    traps = sorted(path for path in (REPO / "tests" / "corpus").glob("tl*_trap_*") if path.is_dir())
    assert traps
    for trap in traps:
        shutil.copytree(trap, tmp_path / trap.name)
    result = torchlint("--fix", str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    changed = [str(copy.relative_to(tmp_path)) for copy in tmp_path.rglob("*.py")
               if copy.read_bytes() != (REPO / "tests" / "corpus" / copy.relative_to(tmp_path)).read_bytes()]
    assert changed == []


def test_fix_keeps_crlf_line_endings(torchlint, tmp_path):
    path = tmp_path / "t.py"
    path.write_bytes(BUG.replace("\n", "\r\n").encode())
    assert torchlint("--fix", str(path)).returncode == 0
    data = path.read_bytes()
    assert (FIXED_LINE + "\r\n").encode() in data
    assert data.count(b"\r\n") == data.count(b"\n") == BUG.count("\n") + 1


def test_fix_keeps_bom_and_missing_final_newline(torchlint, tmp_path):
    path = tmp_path / "t.py"
    path.write_bytes(b"\xef\xbb\xbf" + BUG.rstrip("\n").encode())
    assert torchlint("--fix", str(path)).returncode == 0
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and not data.endswith(b"\n")
    assert FIXED_LINE.encode() in data


def test_fix_keeps_a_declared_latin1_encoding(torchlint, tmp_path):
    path = tmp_path / "t.py"
    source = "# -*- coding: latin-1 -*-\n# entra\xeenement\n" + BUG
    path.write_bytes(source.encode("latin-1"))
    assert torchlint("--fix", str(path)).returncode == 0
    text = path.read_bytes().decode("latin-1")
    assert "entra\xeenement" in text and FIXED_LINE in text


def test_fix_keeps_the_file_mode(torchlint, tmp_path):
    path = tmp_path / "t.py"
    path.write_text(BUG)
    path.chmod(0o751)
    assert torchlint("--fix", str(path)).returncode == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert FIXED_LINE in path.read_text()


class _BreaksSyntax(Rule):
    code = "TL901"
    name = "breaks-syntax"
    severity = "error"
    summary = "test rule whose fix does not parse"

    def check(self, context):
        for loop in context.loops:
            edit = context.replace(loop.backwards[0].node, "loss.backward(((")
            yield Finding(loop.backwards[0].node, "broken fix", Fix(SAFE, "break it", (edit,)))


class _Crashes(Rule):
    code = "TL902"
    name = "crashes"
    severity = "error"
    summary = "test rule that raises"

    def check(self, context):
        raise ZeroDivisionError("boom")


def test_a_fix_that_would_not_parse_is_dropped_and_reported():
    outcome = fix_source(BUG, "t.py", [_BreaksSyntax] + list(ALL_RULES))
    assert [d.code for d, _ in outcome.dropped] == ["TL901"]
    assert FIXED_LINE in outcome.source  # the good fix still applies
    cst.parse_module(outcome.source)


def test_a_failed_rename_leaves_the_original_and_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "t.py"
    path.write_text(BUG)
    original = SourceText(BUG, "utf-8", False)

    def failing_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError):
        write_atomically(path, BUG + "# changed\n", original, BUG.encode())
    assert path.read_text() == BUG
    assert [p.name for p in tmp_path.iterdir()] == ["t.py"]


def test_a_failed_write_leaves_the_original(tmp_path, monkeypatch):
    path = tmp_path / "t.py"
    path.write_text(BUG)
    original = SourceText(BUG, "utf-8", False)
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(5, "I/O error")))
    with pytest.raises(OSError):
        write_atomically(path, "x = 1\n", original, BUG.encode())
    assert path.read_text() == BUG
    assert [p.name for p in tmp_path.iterdir()] == ["t.py"]


def test_a_file_changed_since_it_was_read_is_not_overwritten(tmp_path):
    path = tmp_path / "t.py"
    path.write_text(BUG + "# edited by someone else\n")
    with pytest.raises(WriteRefused, match="changed on disk"):
        write_atomically(path, "x = 1\n", SourceText(BUG, "utf-8", False), BUG.encode())
    assert path.read_text().endswith("# edited by someone else\n")


def test_a_crashing_rule_is_reported_and_the_others_still_run():
    diagnostics, problems = lint_source(BUG, "t.py", [_Crashes] + list(ALL_RULES))
    assert [d.code for d in diagnostics] == ["TL003"]
    assert len(problems) == 1 and problems[0].kind == "internal"
    assert "t.py" in problems[0].message and "TL902" in problems[0].message and "boom" in problems[0].message


def test_cli_exits_2_on_a_rule_crash_and_still_lints_every_file(tmp_path, monkeypatch, capsys):
    (tmp_path / "a.py").write_text(BUG)
    (tmp_path / "b.py").write_text(BUG)
    import torchlint.rules as rules

    monkeypatch.setattr(rules, "rules_by_codes", lambda codes: (_Crashes,) + tuple(ALL_RULES))
    code = cli.main([str(tmp_path), "--output-format", "concise", "--no-cache"])
    out, err = capsys.readouterr()
    assert code == 2
    assert out.count("TL003") == 2
    assert err.count("rule TL902 (crashes) crashed: ZeroDivisionError: boom") == 2
    assert "Traceback" not in err
    cli.main([str(tmp_path / "a.py"), "--verbose", "--no-cache"])
    assert "Traceback" in capsys.readouterr().err


def test_overlapping_fixes_converge_over_rounds():
    # TL003 inserts before the backward and TL004 rewrites the condition: both land, in one or more rounds.
    source = BUG.replace("(i + 1) % accum", "i % accum")
    outcome = fix_source(source, "t.py", ALL_RULES)
    assert outcome.converged and outcome.remaining == []
    assert FIXED_LINE in outcome.source and "(i + 1) % accum == 0 or" in outcome.source
    assert fix_source(outcome.source, "t.py", ALL_RULES).source == outcome.source


def test_edits_are_applied_at_their_one_based_positions():
    from torchlint.fix import apply_edits

    text = "ab\ncd\n"
    assert apply_edits(text, [Edit(2, 2, 2, 3, "X"), Edit(1, 1, 1, 1, ">")]) == ">ab\ncX\n"


# --- through the command: a failed write loses nothing and leaves no temporary file ---------------------


def _fix_folder(tmp_path, capsys):
    code = cli.main(["--fix", str(tmp_path), "--output-format", "concise"])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_does_not_overwrite_a_file_edited_while_it_was_being_fixed(tmp_path, monkeypatch, capsys):
    import torchlint.fix

    path = tmp_path / "t.py"
    path.write_text(BUG)
    edited = BUG + "# saved from the editor meanwhile\n"
    real_fix_source = torchlint.fix.fix_source

    def fix_while_someone_saves(*args, **kwargs):
        outcome = real_fix_source(*args, **kwargs)
        path.write_text(edited)
        return outcome

    monkeypatch.setattr(torchlint.fix, "fix_source", fix_while_someone_saves)
    code, out, err = _fix_folder(tmp_path, capsys)
    assert code == 2
    assert path.read_text() == edited
    assert err.count("t.py") == 1 and "changed on disk while torchlint was fixing it; not overwritten" in err
    assert "Fixed" not in out and "TL003" in out  # the finding is still reported, not claimed fixed
    assert [p.name for p in tmp_path.iterdir()] == ["t.py"]


def _failing_replace(src, dst):
    raise OSError(28, "No space left on device")


def _failing_fsync(fd):
    raise OSError(5, "Input/output error")


def _failing_chmod(path, mode):
    raise PermissionError(1, "Operation not permitted")


def _interrupted_write(fd):
    raise KeyboardInterrupt


@pytest.mark.parametrize("name, failure, message", [
    ("replace", _failing_replace, "No space left on device"),
    ("fsync", _failing_fsync, "Input/output error"),
    ("chmod", _failing_chmod, "Operation not permitted"),
    ("fsync", _interrupted_write, None),
])
def test_cli_leaves_every_file_as_it_was_and_no_temporary_file_after_a_failed_write(
        tmp_path, monkeypatch, capsys, name, failure, message):
    (tmp_path / "a.py").write_text(BUG)
    (tmp_path / "b.py").write_bytes(BUG.replace("\n", "\r\n").encode())
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    monkeypatch.setattr(os, name, failure)
    code, out, err = _fix_folder(tmp_path, capsys)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    if message is None:  # Ctrl-C while writing: the usual exit status, and still nothing half-written
        assert code == 130
        return
    assert code == 2
    assert err.count(message) == 2
    assert f"{tmp_path / 'a.py'}: fixes not written: {message}" in err and "b.py: fixes not written" in err
    assert "Fixed" not in out and out.count("TL003") == 2


# --- a crash in the shared loop analysis ----------------------------------------------------------------


def test_cli_reports_a_crash_in_the_loop_analysis_with_its_file_and_lints_the_others(tmp_path, monkeypatch, capsys):
    import torchlint.context

    (tmp_path / "a.py").write_text(BUG)
    (tmp_path / "b.py").write_text(BUG)
    real_init = torchlint.context.FileContext.__init__

    def init(self, path, source, module, *rest):
        if path.endswith("a.py"):
            raise KeyError("loop analysis exploded")
        real_init(self, path, source, module, *rest)

    monkeypatch.setattr(torchlint.context.FileContext, "__init__", init)
    code = cli.main([str(tmp_path), "--output-format", "concise", "--no-cache"])
    out, err = capsys.readouterr()
    assert code == 2
    assert err.count("a.py: internal error while analysing loops: KeyError: 'loop analysis exploded'") == 1
    assert "b.py" not in err and "Traceback" not in err
    assert "b.py:3:5: TL003" in out and "a.py:" not in out


def test_cli_fix_skips_a_file_whose_loop_analysis_crashes_and_fixes_the_others(tmp_path, monkeypatch, capsys):
    import torchlint.context

    (tmp_path / "a.py").write_text(BUG)
    (tmp_path / "b.py").write_text(BUG)
    real_find = torchlint.context.find_training_loops

    def find(module, names, source=None, trainers=None):
        if any(line.comment is not None and "crash here" in line.comment.value for line in module.header):
            raise RecursionError("maximum recursion depth exceeded")
        return real_find(module, names, source, trainers)

    (tmp_path / "a.py").write_text("# crash here\n" + BUG)
    monkeypatch.setattr(torchlint.context, "find_training_loops", find)
    code, out, err = _fix_folder(tmp_path, capsys)
    assert code == 2
    assert err.count("a.py: internal error while analysing loops: RecursionError") == 1
    assert (tmp_path / "a.py").read_text() == "# crash here\n" + BUG
    assert FIXED_LINE in (tmp_path / "b.py").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "b.py"]


# An LR sweep: the scheduler steps first, and the rest of the iteration records the rate the step used.
_LR_SWEEP = '''\
import torch
from torch import nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-5)
scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=1.1)
rates, losses = [], []
for x, y in loader:
    scheduler.step()
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
{record}
'''


@pytest.mark.parametrize("record", [
    "    rates.append(optimizer.param_groups[0]['lr'])",
    "    print(f'lr {scheduler.get_last_lr()[0]:.2e} loss {loss.item():.3f}')",
    "    if loss.item() > 4 * min(losses, default=1e9):\n        print(scheduler.last_epoch)\n        break",
    "    log_rate(scheduler, loss.item())",
])
def test_safe_fix_does_not_move_a_scheduler_whose_rate_is_read_after_the_step(record):
    """Moved after `optimizer.step()`, the scheduler would have advanced before the read: every recorded rate
    would be the next update's, not the one this loss came with. The finding stays; the fix is unsafe."""
    source = _LR_SWEEP.format(record=record)
    outcome = fix_source(source, "sweep.py", ALL_RULES)
    assert outcome.source == source
    assert [d.code for d in outcome.remaining] == ["TL009"]
    moved = fix_source(source, "sweep.py", ALL_RULES, unsafe=True).source
    assert moved.index("scheduler.step()") > moved.index("optimizer.step()")


def test_safe_fix_moves_a_scheduler_when_nothing_after_the_step_reads_the_rate():
    """The precondition refuses no more than it must: a rate read between the scheduler's place and the step
    is, before and after the move, the rate that step uses; the fix stays safe."""
    source = _LR_SWEEP.format(record="    losses.append(loss.item())").replace(
        "    optimizer.zero_grad()\n", "    optimizer.zero_grad()\n    rates.append(optimizer.param_groups[0]['lr'])\n")
    fixed = fix_source(source, "sweep.py", ALL_RULES).source
    assert fixed.index("scheduler.step()") > fixed.index("optimizer.step()")


def test_safe_fix_does_not_move_a_scheduler_whose_rate_a_helper_records_after_the_step():
    """The read may sit in a helper of the file the loop calls after the step (`record(history, optimizer,
    loss)`); the fast partial parse keeps that helper's body, so the fix is unsafe there too."""
    path = REPO / "tests" / "corpus" / "tl009_bug_lr_sweep_records_rate.py"
    source = path.read_text(encoding="utf-8")
    outcome = fix_source(source, str(path), ALL_RULES)
    assert outcome.source == source
    assert [d.code for d in outcome.remaining] == ["TL009"]


# --- TL008's `.item()` fix turns the running total into a Python float: safe only where every later use of
# the total, and of every value computed from it, takes a float ------------------------------------------

_TOTAL_LOOP = """\
import torch
from reporting import report

model = torch.nn.Linear(2, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.ones(4, 2), torch.zeros(4, 1))] * 3
total = 0.0
for x, y in loader:
    loss = torch.nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    total += loss
"""
# Uses that need a tensor: a float has no `.detach()`, `.cpu()` or `.item()`, and `torch.stack` takes tensors.
_TENSOR_USES = (
    "average = (total / len(loader)).detach().cpu().numpy()",
    "print(total.cpu())",
    "print(total.item())",
    "mean = total / len(loader)\nprint(mean.item())",
    "print(torch.stack([total, total]))",
    "print((total if total > 0 else -total).item())",
    # a decorator runs where the function is made, in the total's scope, though the function has its own `total`
    "@report(total.item())\ndef show(total):\n    return total\nshow(1)",
)
# Uses the code does not show to take a float: a function of another package, a list kept for later.
_UNKNOWN_USES = (
    "report(total / len(loader))",
    "history = [total]",
    "metrics = {'loss': total}",
)
# Uses that take a float as well as a tensor.
_NUMBER_USES = (
    "print(total / len(loader))",
    "print(f'{total / len(loader):.4f}')",
    "print('%.3f' % total, '{:.2f}'.format(total))",
    "average = round(total / len(loader), 4)\nprint(average, float(average) > 0)",
    "print(max(total, 0.0) < 10)",
    # a nested scope's own `total` is another variable: its tensor uses are not the running total's
    "def summary(total):\n    return total.item()\nprint(total / len(loader), summary(torch.ones(1)))",
    "print(total, [total.item() for total in model(torch.ones(3, 2))])",
)


def _total_fix(use: str):
    diagnostics, problems = lint_source(_TOTAL_LOOP + use + "\n", "t.py", ALL_RULES)
    assert not problems
    found = [d for d in diagnostics if d.code == "TL008"]
    assert [d.line for d in found] == [13], diagnostics  # the finding stays whatever the fix
    return found[0].fix


@pytest.mark.parametrize("use", _TENSOR_USES)
def test_tl008_offers_no_fix_when_the_total_is_later_used_as_a_tensor(use):
    assert _total_fix(use) is None
    source = _TOTAL_LOOP + use + "\n"
    assert fix_source(source, "t.py", ALL_RULES, unsafe=True).source == source


@pytest.mark.parametrize("use", _UNKNOWN_USES)
def test_tl008_fix_is_unsafe_when_a_later_use_is_not_shown_to_take_a_number(use):
    fix = _total_fix(use)
    assert fix is not None and fix.applicability == "unsafe"
    source = _TOTAL_LOOP + use + "\n"
    assert fix_source(source, "t.py", ALL_RULES).source == source  # `--fix` leaves it
    assert "total += loss.item()" in fix_source(source, "t.py", ALL_RULES, unsafe=True).source


@pytest.mark.parametrize("use", _NUMBER_USES)
def test_tl008_fix_is_safe_when_every_later_use_takes_a_number(use):
    fix = _total_fix(use)
    assert fix is not None and fix.applicability == SAFE


def test_tl008_safe_fixes_run_and_the_withheld_ones_would_have_crashed(tmp_path):
    """Run it: every program `--fix` writes still runs; the `.item()` rewrite it withholds would make the
    programs with a tensor use raise."""
    import json
    import subprocess
    import sys

    pytest.importorskip("torch")
    (tmp_path / "reporting.py").write_text("def report(value):\n    print(value)\n")
    programs = {}
    for index, use in enumerate(_NUMBER_USES):
        programs[f"number_{index}"] = fix_source(_TOTAL_LOOP + use + "\n", "t.py", ALL_RULES).source
        assert "total += loss.item()" in programs[f"number_{index}"]
    for index, use in enumerate(_TENSOR_USES):
        source = _TOTAL_LOOP + use + "\n"
        assert fix_source(source, "t.py", ALL_RULES).source == source
        programs[f"tensor_{index}"] = source.replace("total += loss\n", "total += loss.item()\n")
    for name, source in programs.items():
        (tmp_path / f"{name}.py").write_text(source)
    # One interpreter runs them all (importing torch once), each as its own `__main__`.
    driver = ("import json, runpy, sys\nsys.path.insert(0, '.')\noutcomes = {}\n"
              f"for name in {sorted(programs)!r}:\n"
              "    try:\n        runpy.run_path(name + '.py', run_name='__main__')\n        outcomes[name] = True\n"
              "    except Exception as error:\n        outcomes[name] = type(error).__name__\n"
              "print(json.dumps(outcomes))\n")
    (tmp_path / "driver.py").write_text(driver)
    run = subprocess.run([sys.executable, "driver.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    outcomes = json.loads(run.stdout.strip().splitlines()[-1])
    assert all(outcomes[f"number_{i}"] is True for i in range(len(_NUMBER_USES))), outcomes
    assert all(outcomes[f"tensor_{i}"] in ("AttributeError", "TypeError") for i in range(len(_TENSOR_USES))), outcomes


_TRAINER_TOTAL = """\
import torch


class Trainer:
    def __init__(self, model):
        self.model = model
        self.running_loss = 0.0
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def train(self, loader):
        self.running_loss = 0.0
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self.running_loss += loss
        print(f"{self.running_loss / len(loader):.3f}")
"""


def test_tl008_fix_on_an_attribute_total_is_safe_only_when_no_other_method_reads_it():
    """Set in `__init__`, read only in the loop's method as a number: safe. Read in another method (which the
    sparse parse may not even keep): not shown, so unsafe."""
    for source, applicability in ((_TRAINER_TOTAL, SAFE),
                                  (_TRAINER_TOTAL + "\n    def summary(self):\n        return self.running_loss.item()\n",
                                   "unsafe")):
        diagnostics, _ = lint_source(source, "t.py", ALL_RULES)
        (finding,) = [d for d in diagnostics if d.code == "TL008"]
        assert finding.fix is not None and finding.fix.applicability == applicability
