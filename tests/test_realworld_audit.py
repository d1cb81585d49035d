"""bench/realworld.py: the audit's halves, judged safe fixes and hand-hunted misses.

The real-world audit is how precision on unseen code is measured; these tests run the script
on a tiny audit whose "torchlint" is a stand-in printing fixed findings, so what the report
says about each half, each safe fix and each miss is checked without any checkout.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "realworld.py"
HEADER = "repo,commit,path,line,code,verdict,class,reason,fix\n"
A = "a" * 40
B = "b" * 40


def run(tmp_path: Path, audit: str, findings: dict, *extra: str, train_py: str = ""):
    """Run the script on checkouts whose stand-in torchlint prints `findings[folder]`."""
    (tmp_path / "audit.csv").write_text(HEADER + textwrap.dedent(audit), encoding="utf-8")
    checkouts = tmp_path / "checkouts"
    for folder, items in findings.items():
        (checkouts / folder).mkdir(parents=True)
        (checkouts / folder / "train.py").write_text(train_py, encoding="utf-8")
        (checkouts / folder / "findings.json").write_text(json.dumps(items), encoding="utf-8")
    fake = tmp_path / "fake_torchlint.py"
    fake.write_text("import sys; sys.stdout.write(open('findings.json').read())\n", encoding="utf-8")
    cmd = [sys.executable, str(SCRIPT), str(checkouts), "--audit", str(tmp_path / "audit.csv"),
           "--torchlint", f"{sys.executable} {fake}", *extra]
    return subprocess.run(cmd, capture_output=True, text=True)


def finding(line: int, code: str, fix=None) -> dict:
    return {"path": "train.py", "line": line, "column": 1, "code": code, "message": f"{code} here",
            "fix": None if fix is None else {"applicability": fix, "message": "m", "edits": []}}


def test_the_audit_file_in_the_repository_is_well_formed():
    proc = subprocess.run([sys.executable, str(SCRIPT), "/nonexistent-folder"], capture_output=True, text=True)
    assert "no such folder" in proc.stderr, proc.stderr  # the audit loaded; only the folder is missing


def test_precision_and_recall_are_reported_per_half(tmp_path):
    audit = f"""\
        o/tuned,{A},,,,repo,tuning,"tuning repo",
        o/held,{B},,,,repo,check,"check repo",
        o/tuned,{A},train.py,3,TL002,TP,,"real",none
        o/tuned,{A},train.py,9,TL003,FP,other:packed,"not a bug",unsafe
        o/held,{B},train.py,4,TL004,TP,,"real",unsafe
        o/held,{B},train.py,20,TL010,missed,trailing window,"never flushed",
        o/later,{A},,,,repo,check-2,"a second round's check repo",
        o/later,{A},train.py,5,TL007,TP,,"real",none
    """
    proc = run(tmp_path, audit, {"o__tuned": [finding(3, "TL002"), finding(9, "TL003", "unsafe")],
                                 "o__held": [finding(4, "TL004", "unsafe")],
                                 "o__later": [finding(5, "TL007"), finding(8, "TL010")]}, "--json")
    summary = json.loads(proc.stdout)
    assert summary["halves"]["tuning"]["precision"] == 0.5
    assert summary["halves"]["check"]["precision"] == 1.0
    assert summary["halves"]["check"]["recall"] == 0.5
    assert summary["halves"]["check-2"]["repos"] == 1
    assert summary["halves"]["check-2"]["unaudited"] == 1  # a second round is counted on its own
    assert summary["misses"][0]["code"] == "TL010"
    assert proc.returncode == 1  # a false positive is still reported


def test_a_safe_fix_must_be_judged_and_a_breaking_one_is_flagged(tmp_path):
    audit = f"""\
        o/r,{A},,,,repo,check,"repo",
        o/r,{A},train.py,3,TL001,TP,,"real",none
        o/r,{A},train.py,7,TL005,TP,,"real",safe-breaks
        o/r,{A},train.py,9,TL004,TP,,"real",safe-ok
    """
    proc = run(tmp_path, audit, {"o__r": [finding(3, "TL001", "safe"), finding(7, "TL005", "safe"),
                                          finding(9, "TL004", "safe")]})
    assert proc.returncode == 1
    assert "SAFE FIXES NOT JUDGED (judge the --diff" in proc.stdout
    assert "o/r train.py:3: TL001" in proc.stdout
    assert "SAFE FIXES THAT BREAK A PROGRAM" in proc.stdout
    assert "o/r train.py:7: TL005" in proc.stdout
    assert "train.py:9" not in proc.stdout.split("SAFE FIXES NOT JUDGED")[1].split("\n\n")[0]


def test_a_reported_hand_hunted_miss_is_listed_for_auditing(tmp_path):
    audit = f"""\
        o/r,{A},,,,repo,tuning,"repo",
        o/r,{A},train.py,5,TL003,missed,undivided mean,"loss not divided by accum",
    """
    proc = run(tmp_path, audit, {"o__r": [finding(5, "TL003")]})
    assert "hand-hunted misses now reported" in proc.stdout
    assert "UNAUDITED findings (1)" in proc.stdout


@pytest.mark.parametrize(
    "row, message",
    [
        (f"o/r,{A},,,,repo,,\"no half\",", "the class of a manifest row is its half"),
        (f"o/r,{A},,,,repo,check,\"r\",\no/r,{A},train.py,3,TL002,TP,,\"real\",safe", "fix must be empty or one of"),
        (f"o/r,{A},,,,repo,check,\"r\",\no/r,{A},train.py,3,TL002,missed,,\"x\",", "a missed row"),
    ],
)
def test_a_malformed_row_is_a_clear_error(tmp_path, row, message):
    proc = run(tmp_path, row + "\n", {})
    assert proc.returncode == 2
    assert message in proc.stderr


def test_the_hand_hunted_sample_gives_recall_per_half(tmp_path):
    audit = f"""\
        o/r,{A},,,,repo,check-3,"repo",
        o/r,{A},train.py,4,TL004,TP,,"real",none
        o/r,{A},train.py,30,TL016,missed,ddp forward,"all-reduce on every micro-batch",
        o/s,{B},,,,repo,tuning,"other",
    """
    (tmp_path / "realworld_hunted.csv").write_text(
        "repo,commit,path,line,code,class,reason\n"
        f"o/r,{A},train.py,6,TL004,off by one,\"i % n with i from 0\"\n"  # reported two lines away
        f"o/r,{A},train.py,30,TL016,ddp forward,\"no no_sync\"\n"
        f"o/r,{A},train.py,4,TL003,undivided,\"a finding of another rule does not report it\"\n",
        encoding="utf-8",
    )
    proc = run(tmp_path, audit, {"o__r": [finding(4, "TL004")], "o__s": []}, "--json")
    summary = json.loads(proc.stdout)
    assert summary["halves"]["check-3"]["hunted"] == 3
    assert summary["halves"]["check-3"]["hunted_found"] == 1
    assert summary["halves"]["check-3"]["hunted_recall"] == pytest.approx(1 / 3)
    assert summary["halves"]["tuning"]["hunted_recall"] is None
    assert {m["code"] for m in summary["hunted_missed"]} == {"TL016", "TL003"}
    report = subprocess.run(proc.args[:-1], capture_output=True, text=True).stdout
    assert "hand-hunted bugs reported: 1 / 3 = 33.3%" in report
    assert "o/r train.py:30: TL016 -- no no_sync" in report


def test_a_hunted_row_of_an_unknown_repo_is_a_clear_error(tmp_path):
    (tmp_path / "realworld_hunted.csv").write_text(
        f"repo,commit,path,line,code,class,reason\no/gone,{A},train.py,3,TL002,x,\"y\"\n", encoding="utf-8")
    proc = run(tmp_path, f'o/r,{A},,,,repo,check,"r",\n', {"o__r": []})
    assert proc.returncode == 2
    assert "realworld_hunted.csv:2: repo o/gone has no manifest row" in proc.stderr


def test_a_finding_in_the_same_loop_reports_a_hunted_bug_further_away(tmp_path):
    """TL016 reports the forward that needs `no_sync()`; the hunt named the backward eight lines below, in the
    same loop: one bug. A finding of that rule in another loop of the file does not report it."""
    audit = f"""\
        o/r,{A},,,,repo,check-4,"repo",
        o/r,{A},train.py,3,TL016,TP,,"real",none
    """
    (tmp_path / "realworld_hunted.csv").write_text(
        "repo,commit,path,line,code,class,reason\n"
        f"o/r,{A},train.py,11,TL016,ddp,\"backward every micro-batch\"\n"
        f"o/r,{A},train.py,24,TL016,ddp,\"the second loop's backward\"\n",
        encoding="utf-8",
    )
    code = "for x in loader:\n    out = model(x)\n" + "    pass\n" * 8 + "    out.backward()\n" + "\n" * 10 \
        + "for x in loader:\n    out = model(x)\n    out.backward()\n"
    proc = run(tmp_path, audit, {"o__r": [finding(2, "TL016")]}, "--json", train_py=code)
    summary = json.loads(proc.stdout)
    assert summary["halves"]["check-4"]["hunted"] == 2
    assert summary["halves"]["check-4"]["hunted_found"] == 1
    assert [m["line"] for m in summary["hunted_missed"]] == [24]
