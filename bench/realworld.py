#!/usr/bin/env python3
"""Real-world audit: torchlint's precision on public training code, rerunnable.

``bench/realworld_audit.csv`` names a set of public repositories at fixed commits (the
*manifest*) and records a human verdict on every finding torchlint reported on them. This
script runs torchlint on checkouts of those repositories and compares what it reports now
with the audit, so a change to the analysis shows at once which false positives it fixed,
which true positives it lost and which findings nobody has judged yet.

Usage
-----
Compare (the default mode)::

    python bench/realworld.py CHECKOUTS [--audit bench/realworld_audit.csv]
        [--repo NAME ...] [--json] [--write-unaudited FILE] [--torchlint "CMD"]
        [--timeout S]

For every manifest repository whose folder exists under CHECKOUTS, run::

    CMD . --output-format json --no-cache --exit-zero

in that folder (so reported paths are relative to the checkout; all rules run; the
checkout's own torchlint configuration, if any, applies). CMD defaults to
``sys.executable -m torchlint`` with this working tree (the folder above ``bench/``) first on
``PYTHONPATH``, i.e. the torchlint of this checkout; ``--torchlint "env PYTHONPATH=/old
python -m torchlint"`` runs another build, so two versions can be compared. Every run gets
``PYTHONSAFEPATH=1`` (Python 3.11+), so a checkout whose top level holds modules named like
the standard library (the torch package has ``random.py`` and ``multiprocessing/``) cannot
shadow it.

Findings and audit rows are matched on ``(repo, path, line, code)`` (as a multiset, so two
findings of one code on one line need two rows). The report gives, per repository, the
number of files (``*.py`` and ``*.ipynb``, skipping the folders torchlint skips; ``.gitignore``
is not applied to this count), findings, true positives, false positives and unaudited
findings; the precision ``TP / (TP + FP)`` over the current findings, per rule and overall;
the false positives still reported per class; and lists

* every **unaudited** finding (no audit row, or a row whose verdict is ``?``), with its message;
* every **false positive still reported**, grouped by the audit row's class;
* every **lost true positive** (an audited TP that is no longer reported), by class;
* every **fixed false positive** (an audited FP that is no longer reported), by class.

Missing checkouts are listed and skipped; the others are still compared. ``--repo NAME``
(repeatable, case-insensitive) restricts the run to a repository named ``owner/name``, by
its folder name, by its bare name (``nanoGPT``), or ``pypi:torch==2.13.0`` / ``torch``.
``--half seen|tuning|check|tuning-2|check-2|...`` restricts it to one half of the audit (see below).
``--json`` prints a machine-readable summary instead of the text report.
``--write-unaudited FILE`` writes the unaudited findings as CSV rows in the audit format with
verdict ``?`` and torchlint's message in ``reason``: judge them by hand, replace verdict,
class and reason, and append them to the audit file.

Exit status: 0 when nothing is wrong (no false positive reported, no unaudited finding, no
lost true positive); 1 otherwise; 2 on a usage error, a malformed audit file, or a torchlint
run that failed (exit status other than 0/1, output that is not a JSON list, or a timeout).

Recreating the checkouts::

    python bench/realworld.py --checkout CHECKOUTS [--audit FILE] [--repo NAME ...]
        [--git-url-template TEMPLATE]

clones each GitHub repository of the manifest into ``CHECKOUTS/<owner>__<name>`` from
``https://github.com/{owner}/{name}.git`` (``--git-url-template`` replaces that; it may use
``{owner}``, ``{name}`` and ``{repo}`` (= ``owner/name``), e.g.
``/work/.mirror/{owner}+{name}/repo`` for local mirrors) and checks out the recorded commit
(detached). If the full checkout fails (a mirror without some large binary blobs), only the
files torchlint reads (``*.py``, ``*.ipynb``, ``.gitignore``, ``pyproject.toml``,
``torchlint.toml``) are checked out, with a warning. An entry ``pypi:NAME==VERSION`` is
copied from the installed package into ``CHECKOUTS/NAME`` when the installed version is
VERSION (found with importlib, without importing the package); otherwise the ``pip``
command that gets it is printed. An existing folder is left as it is.

Audit file format
-----------------
CSV with the header ``repo,commit,path,line,code,verdict,class,reason,fix``.

* Manifest rows, one per repository: ``repo`` (``owner/name`` on GitHub, or
  ``pypi:NAME==VERSION``), ``commit`` (40 hex digits; the version for a ``pypi:`` entry),
  ``path``, ``line``, ``code`` and ``fix`` empty, ``verdict`` = ``repo``, ``class`` = the
  repository's *half*, ``reason`` a free description of the codebase. The half is ``seen``
  for the codebases the rules were corrected against before the split existed, else
  ``tuning`` or ``check`` as ``python ../shared/split_half.py owner/name`` assigns it (a
  hash of the name: nobody's choice); a later round of codebases, split the same way, is
  ``tuning-2`` / ``check-2`` (then ``-3``), so that its check half is one no correction was made on.
  Classes of false alarms are corrected on the tuning half; the check half's precision, measured before its findings are looked at, is the
  figure that says whether the corrections generalise. The report gives precision (and
  recall) per half.
* Finding rows: ``repo`` and ``commit`` as in the repository's manifest row, ``path``
  relative to the checkout (a notebook finding is ``path/to/nb.ipynb:cell N``, as torchlint
  prints it), ``line`` (1-based), ``code`` (``TL000``...), ``verdict`` ``TP``, ``FP`` or ``?``,
  ``class`` (for an FP: ``target-rebound``, ``every-path``, ``inplace-detach``,
  ``dist-autograd``, ``fresh-optimizer``, ``token-normalisation``, ``bounded-total`` or
  ``other:<kebab-name>``; for a TP: the bug in a few words, or empty), ``reason``: one
  line saying why, in terms of the code, and ``fix``: the judged fix torchlint offers for
  it — empty (not recorded), ``none``, ``unsafe`` (applied only with ``--unsafe-fixes``), ``safe-ok`` (the
  ``--diff`` was read: the edited program still runs and trains as intended) or
  ``safe-breaks`` (the safe fix breaks a working program). A finding whose fix is now safe
  but whose row does not say ``safe-ok`` or ``safe-breaks`` is listed as an unjudged safe
  fix; a ``safe-breaks`` fix still offered as safe is listed too; both make the run not
  clean.
* Missed rows (``verdict`` = ``missed``): a bug found by hand in the codebase that torchlint
  does not report; ``code`` is the rule that should report it, ``line`` where it would,
  ``class`` the bug's shape in a few words, ``reason`` why it is a bug, ``fix`` empty. They
  give recall: reported true positives / (those + the misses still unreported). A finding
  that matches a missed row is listed for auditing.

The hand-hunted sample, ``realworld_hunted.csv`` next to the audit (``--hunted FILE``), lists
every bug found by reading a half's training loops by hand, without torchlint's output,
whether torchlint reports it or not: ``repo,commit,path,line,code,class,reason``. The report
gives, per half, how many of them torchlint reports (a finding of the bug's rule in its file,
or cell, at most five lines away counts, or in a Python file one in the same innermost loop or
function: TL016 reports the forward that needs ``no_sync()``, a hunt may name the backward) — recall on a sample nobody chose by torchlint's
output, unlike TP / (TP + missed), whose true positives are torchlint's own.

The script uses the standard library only and never imports torch.
"""

from __future__ import annotations

import argparse
import ast
import collections
import csv
import functools
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
DEFAULT_AUDIT = HERE / "realworld_audit.csv"
DEFAULT_HUNTED = HERE / "realworld_hunted.csv"
HUNTED_HEADER = ["repo", "commit", "path", "line", "code", "class", "reason"]
HUNT_SLACK = 5  # a hunted bug is reported by a finding of its rule in its file (cell) this many lines away at most
DEFAULT_GIT_URL = "https://github.com/{owner}/{name}.git"
HEADER = ["repo", "commit", "path", "line", "code", "verdict", "class", "reason", "fix"]
HALVES = (
    "seen", "tuning", "check", "tuning-2", "check-2", "tuning-3", "check-3",
    "tuning-4", "check-4", "tuning-5", "check-5", "tuning-6", "check-6", "tuning-7", "check-7", "tuning-8", "check-8",
    "tuning-9", "check-9", "tuning-10", "check-10",
)
FIX_VERDICTS = ("none", "unsafe", "safe-ok", "safe-breaks")
FP_CLASSES = (
    "target-rebound",
    "every-path",
    "inplace-detach",
    "dist-autograd",
    "fresh-optimizer",
    "token-normalisation",
    "bounded-total",
)
SKIP_DIRS = {".git", ".venv", "venv", "build", "dist", "node_modules", "__pycache__", "site-packages"}
TORCHLINT_READS = (".py", ".ipynb")
TORCHLINT_CONFIG = (".gitignore", "pyproject.toml", "torchlint.toml")
CODE_RE = re.compile(r"^TL\d{3}$")
KEBAB_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
GITHUB_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
PYPI_RE = re.compile(r"^pypi:([A-Za-z0-9][A-Za-z0-9_.-]*)==([A-Za-z0-9_.+!-]+)$")


class AuditError(Exception):
    """A malformed audit file; the message names the file and line."""


@dataclass
class Repo:
    name: str  # owner/name or pypi:NAME==VERSION
    commit: str
    description: str
    lineno: int
    half: str = "seen"  # seen (tuned against before the split), tuning or check

    @property
    def pypi(self):
        m = PYPI_RE.match(self.name)
        return (m.group(1), m.group(2)) if m else None

    @property
    def folder(self) -> str:
        if self.pypi:
            return self.pypi[0]
        owner, name = self.name.split("/")
        return f"{owner}__{name}"


@dataclass
class Row:
    repo: str
    commit: str
    path: str
    line: int
    code: str
    verdict: str
    klass: str
    reason: str
    lineno: int
    fix: str = ""  # none, unsafe, safe-ok or safe-breaks (the judged fix); empty when not judged

    @property
    def key(self):
        return (self.repo, self.path, self.line, self.code)


@dataclass
class Audit:
    path: Path
    repos: dict = field(default_factory=dict)  # name -> Repo, in file order
    rows: list = field(default_factory=list)


# ---------------------------------------------------------------------------- audit file


def load_audit(path: Path) -> Audit:
    if not path.is_file():
        raise AuditError(f"{path}: no such audit file")
    audit = Audit(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise AuditError(f"{path}: cannot read: {e}") from None
    reader = csv.reader(io.StringIO(text, newline=""))

    def fail(msg):
        raise AuditError(f"{path}:{reader.line_num}: {msg}")

    try:
        header = next(reader, None)
        if header is None:
            raise AuditError(f"{path}:1: empty file; expected the header {','.join(HEADER)}")
        if [h.strip() for h in header] != HEADER:
            fail(f"expected the header {','.join(HEADER)}, got {','.join(header)}")
        pending = []
        for fields in reader:
            if not fields or all(not f.strip() for f in fields):
                continue
            if len(fields) != len(HEADER):
                fail(f"expected {len(HEADER)} fields, got {len(fields)}")
            repo, commit, rpath, line, code, verdict, klass, reason, fix = (f.strip() for f in fields)
            if not repo:
                fail("empty repo")
            if verdict == "repo":
                if not (GITHUB_RE.match(repo) or PYPI_RE.match(repo)):
                    fail(f"repo {repo!r} is neither owner/name nor pypi:NAME==VERSION")
                if rpath or line or code:
                    fail("a manifest row (verdict 'repo') has empty path, line and code")
                if not commit:
                    fail(f"manifest row for {repo} has no commit")
                m = PYPI_RE.match(repo)
                if m and commit != m.group(2):
                    fail(f"the commit of {repo} must be its version {m.group(2)}")
                if not m and not re.fullmatch(r"[0-9a-f]{40}", commit):
                    fail(f"commit {commit!r} of {repo} is not 40 lowercase hex digits")
                if repo in audit.repos:
                    fail(f"second manifest row for {repo} (first on line {audit.repos[repo].lineno})")
                if klass not in HALVES:
                    fail(f"the class of a manifest row is its half: one of {', '.join(HALVES)}, got {klass!r}")
                if fix:
                    fail("a manifest row has an empty fix")
                audit.repos[repo] = Repo(repo, commit, reason, reader.line_num, klass)
                continue
            if verdict not in ("TP", "FP", "?", "missed"):
                fail(f"verdict must be repo, TP, FP, ? or missed, got {verdict!r}")
            if verdict in ("TP", "FP") and fix and fix not in FIX_VERDICTS:
                fail(f"a {verdict} row's fix must be empty or one of {', '.join(FIX_VERDICTS)}, got {fix!r}")
            if verdict == "missed" and (fix or not klass):
                fail("a missed row (a bug found by hand that torchlint does not report) has a class and no fix")
            if not rpath:
                fail("a finding row needs a path")
            try:
                lineno = int(line)
                if lineno < 1:
                    raise ValueError
            except ValueError:
                fail(f"line must be a positive integer, got {line!r}")
            if not CODE_RE.match(code):
                fail(f"code must look like TL003, got {code!r}")
            if verdict == "FP":
                if not klass:
                    fail("an FP row needs a class")
                if klass not in FP_CLASSES:
                    if not (klass.startswith("other:") and KEBAB_RE.match(klass[6:])):
                        fail(f"unknown FP class {klass!r}: use one of {', '.join(FP_CLASSES)} or other:<kebab-name>")
            if verdict in ("TP", "FP", "missed") and not reason:
                fail(f"a {verdict} row needs a reason")
            pending.append(Row(repo, commit, rpath, lineno, code, verdict, klass, reason, reader.line_num, fix))
    except csv.Error as e:
        raise AuditError(f"{path}:{reader.line_num}: {e}") from None
    for row in pending:
        repo = audit.repos.get(row.repo)
        if repo is None:
            raise AuditError(f"{path}:{row.lineno}: repo {row.repo} has no manifest row (verdict 'repo')")
        if row.commit != repo.commit:
            raise AuditError(
                f"{path}:{row.lineno}: commit {row.commit} differs from the manifest's {repo.commit} for {row.repo}"
                " (re-audit the finding at the manifest's commit)"
            )
        audit.rows.append(row)
    if not audit.repos:
        raise AuditError(f"{path}: no manifest rows (verdict 'repo')")
    return audit


def load_hunted(path: Path, audit: Audit) -> list:
    """The bugs found by reading training loops by hand, reported by torchlint or not (module docstring)."""
    if not path.is_file():
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise AuditError(f"{path}: cannot read: {e}") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    rows = []
    try:
        header = next(reader, None)
        if header != HUNTED_HEADER:
            raise AuditError(f"{path}:1: the header must be {','.join(HUNTED_HEADER)}")
        for fields in reader:
            if not any(fields):
                continue
            where = f"{path}:{reader.line_num}"
            if len(fields) != len(HUNTED_HEADER):
                raise AuditError(f"{where}: expected {len(HUNTED_HEADER)} fields, got {len(fields)}")
            repo, commit, rpath, line, code, klass, reason = fields
            known = audit.repos.get(repo)
            if known is None:
                raise AuditError(f"{where}: repo {repo} has no manifest row in {audit.path}")
            if commit != known.commit:
                raise AuditError(f"{where}: commit {commit} differs from the manifest's {known.commit} for {repo}")
            if not (line.isdigit() and int(line) > 0) or not CODE_RE.match(code) or not rpath or not reason:
                raise AuditError(f"{where}: a hunted row needs a path, a positive line, a code like TL003 and a reason")
            rows.append(Row(repo, commit, rpath, int(line), code, "hunted", klass, reason, reader.line_num))
    except csv.Error as e:
        raise AuditError(f"{path}:{reader.line_num}: {e}") from None
    return rows


def hunted_reported(row: Row, findings: list, folder: Optional[Path] = None) -> bool:
    """A finding of the hunted bug's rule in its file (and cell) reports it when it is within HUNT_SLACK lines,
    or, in a Python file of the checkout `folder`, in the same innermost loop or function (TL016 reports the
    forward that needs `no_sync()`, the hunt may name the backward ten lines below: one bug)."""
    near = [f for f in findings if f["code"] == row.code and f["path"] == row.path]
    if any(abs(f["line"] - row.line) <= HUNT_SLACK for f in near):
        return True
    if folder is None or not near or not row.path.endswith(".py"):
        return False
    block = innermost_block(str(folder / row.path), row.line)
    return block is not None and any(innermost_block(str(folder / row.path), f["line"]) == block for f in near)


@functools.lru_cache(maxsize=64)
def _blocks(path: str) -> tuple:
    """(first line, last line) of every loop and function of a Python file; () when it does not parse."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return ()
    kinds = (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef)
    return tuple((node.lineno, node.end_lineno) for node in ast.walk(tree) if isinstance(node, kinds))


def innermost_block(path: str, line: int) -> Optional[tuple]:
    """The innermost loop or function of the file holding `line`, as (first line, last line); None outside all."""
    holding = [block for block in _blocks(path) if block[0] <= line <= block[1]]
    return max(holding, key=lambda block: (block[0], -block[1])) if holding else None


# ---------------------------------------------------------------------------- running torchlint


def default_torchlint() -> list:
    return [sys.executable, "-m", "torchlint"]


def torchlint_env(default_cmd: bool) -> dict:
    env = dict(os.environ)
    env["PYTHONSAFEPATH"] = "1"
    env["NO_COLOR"] = "1"
    env["TORCHLINT_NO_CACHE"] = "1"
    if default_cmd:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    return env


def run_torchlint(cmd: list, folder: Path, env: dict, timeout: float):
    """Return (findings, error); error is None on success."""
    argv = cmd + [".", "--output-format", "json", "--no-cache", "--exit-zero"]
    try:
        proc = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError as e:
        return None, f"cannot run {shlex.join(cmd)}: {e}"
    except subprocess.TimeoutExpired:
        return None, f"torchlint ran over {timeout:g} s"
    tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
    if proc.returncode not in (0, 1):
        return None, f"torchlint exited {proc.returncode}:\n{tail}"
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return None, f"torchlint's output is not JSON (exit {proc.returncode}):\n{proc.stdout[:300]}\n{tail}"
    if not isinstance(data, list):
        return None, "torchlint's JSON output is not a list"
    findings = []
    for f in data:
        path = str(f.get("path", ""))
        if path.startswith("./"):
            path = path[2:]
        if f.get("cell") is not None:
            path = f"{path}:cell {f['cell']}"
        findings.append(
            {
                "path": path,
                "line": int(f.get("line") or 0),
                "column": int(f.get("column") or 0),
                "code": str(f.get("code", "")),
                "message": str(f.get("message", "")),
                "fix": (f.get("fix") or {}).get("applicability") or "none",
            }
        )
    findings.sort(key=lambda f: (f["path"], f["line"], f["column"], f["code"]))
    return findings, None


def count_files(folder: Path) -> int:
    n = 0
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        n += sum(1 for f in filenames if f.endswith(TORCHLINT_READS))
    return n


def checkout_revision(repo: Repo, folder: Path):
    """The commit (or version) the folder holds, when it can be told; else None."""
    if repo.pypi:
        version = folder / "version.py"
        if version.is_file():
            m = re.search(r"__version__\s*=\s*['\"]([^'\"]+)['\"]", version.read_text(errors="replace"))
            if m:
                return m.group(1).split("+")[0]
        return None
    if (folder / ".git").exists():
        try:
            out = subprocess.run(
                ["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        if out.returncode == 0:
            return out.stdout.strip()
    return None


# ---------------------------------------------------------------------------- comparison


def compare(args, audit: Audit, hunted: list = ()) -> int:
    checkouts = Path(args.checkouts)
    if not checkouts.is_dir():
        print(f"error: {checkouts}: no such folder (run with --checkout first)", file=sys.stderr)
        return 2
    repos = select_repos(audit, args.repo, args.half)
    if repos is None:
        return 2
    if args.torchlint:
        cmd = shlex.split(args.torchlint)
        env = torchlint_env(default_cmd=False)
    else:
        cmd = default_torchlint()
        env = torchlint_env(default_cmd=True)

    rows_by_repo = collections.defaultdict(list)
    for row in audit.rows:
        rows_by_repo[row.repo].append(row)
    hunted_by_repo = collections.defaultdict(list)
    for row in hunted:
        hunted_by_repo[row.repo].append(row)

    summary = {
        "audit": str(audit.path),
        "checkouts": str(checkouts),
        "torchlint": shlex.join(cmd),
        "repos": [],
        "missing": [],
        "errors": [],
        "warnings": [],
        "unaudited": [],
        "false_positives": [],
        "lost_true_positives": [],
        "fixed_false_positives": [],
        "unjudged_safe_fixes": [],
        "breaking_safe_fixes": [],
        "found_misses": [],
        "misses": [],
        "hunted_missed": [],
    }
    by_rule = collections.defaultdict(lambda: collections.Counter())
    fp_by_class = collections.Counter()

    for repo in repos:
        folder = checkouts / repo.folder
        if not folder.is_dir():
            summary["missing"].append({"repo": repo.name, "folder": str(folder)})
            continue
        rev = checkout_revision(repo, folder)
        if rev is not None and rev != repo.commit:
            summary["warnings"].append(f"{repo.name}: {folder} is at {rev}, the audit is of {repo.commit}")
        if not args.json:
            print(f"linting {repo.name} ...", file=sys.stderr)
        findings, error = run_torchlint(cmd, folder, env, args.timeout)
        if error is not None:
            summary["errors"].append({"repo": repo.name, "error": error})
            continue
        audited = collections.defaultdict(list)
        missed = collections.defaultdict(list)
        for row in rows_by_repo[repo.name]:
            (missed if row.verdict == "missed" else audited)[row.key].append(row)
        counts = collections.Counter()
        for f in findings:
            key = (repo.name, f["path"], f["line"], f["code"])
            row = audited[key].pop(0) if audited[key] else None
            item = dict(f, repo=repo.name, commit=repo.commit)
            counts["findings"] += 1
            rule = by_rule[f["code"]]
            rule["findings"] += 1
            if row is None and missed[key]:
                # a bug hunted by hand is now reported: audit it as a finding (its fix too)
                hunted = missed[key].pop(0)
                summary["found_misses"].append(dict(item, **{"class": hunted.klass, "reason": hunted.reason}))
            if row is not None and row.verdict != "?" and f["fix"] == "safe":
                if row.fix == "safe-breaks":
                    summary["breaking_safe_fixes"].append(dict(item, **{"class": row.klass, "reason": row.reason}))
                elif row.fix != "safe-ok":
                    summary["unjudged_safe_fixes"].append(item)
            if row is None or row.verdict == "?":
                counts["unaudited"] += 1
                rule["unaudited"] += 1
                summary["unaudited"].append(item)
            elif row.verdict == "TP":
                counts["tp"] += 1
                rule["tp"] += 1
            else:
                counts["fp"] += 1
                rule["fp"] += 1
                fp_by_class[row.klass] += 1
                summary["false_positives"].append(dict(item, **{"class": row.klass, "reason": row.reason}))
        for rows in audited.values():
            for row in rows:  # audited but no longer reported
                item = {
                    "repo": row.repo,
                    "path": row.path,
                    "line": row.line,
                    "code": row.code,
                    "class": row.klass,
                    "reason": row.reason,
                }
                if row.verdict == "TP":
                    counts["lost_tp"] += 1
                    by_rule[row.code]["lost_tp"] += 1
                    summary["lost_true_positives"].append(item)
                elif row.verdict == "FP":
                    counts["fixed_fp"] += 1
                    by_rule[row.code]["fixed_fp"] += 1
                    summary["fixed_false_positives"].append(item)
        for row in hunted_by_repo[repo.name]:
            counts["hunted"] += 1
            if hunted_reported(row, findings, folder):
                counts["hunted_found"] += 1
            else:
                summary["hunted_missed"].append(
                    {"repo": row.repo, "path": row.path, "line": row.line, "code": row.code,
                     "class": row.klass, "reason": row.reason}
                )
        for rows in missed.values():
            for row in rows:  # hunted by hand, still not reported
                counts["missed"] += 1
                summary["misses"].append(
                    {"repo": row.repo, "path": row.path, "line": row.line, "code": row.code,
                     "class": row.klass, "reason": row.reason}
                )
        summary["repos"].append(
            {
                "repo": repo.name,
                "half": repo.half,
                "commit": repo.commit,
                "folder": str(folder),
                "files": count_files(folder),
                "findings": counts["findings"],
                "tp": counts["tp"],
                "fp": counts["fp"],
                "unaudited": counts["unaudited"],
                "lost_tp": counts["lost_tp"],
                "fixed_fp": counts["fixed_fp"],
                "missed": counts["missed"],
                "hunted": counts["hunted"],
                "hunted_found": counts["hunted_found"],
            }
        )

    totals = collections.Counter()
    halves = {h: collections.Counter() for h in HALVES}
    for r in summary["repos"]:
        counted = {k: r[k] for k in COUNTED}
        totals.update(counted)
        halves[r["half"]].update(counted, repos=1)
    summary["totals"] = dict(totals)
    summary["precision"] = precision(totals)
    summary["recall"] = recall(totals)
    summary["hunted_recall"] = hunted_recall(totals)
    summary["halves"] = {
        h: dict(c, precision=precision(c), recall=recall(c), hunted_recall=hunted_recall(c))
        for h, c in halves.items() if c["repos"]
    }
    summary["by_rule"] = {
        code: dict(
            c,
            precision=(c["tp"] / (c["tp"] + c["fp"])) if c["tp"] + c["fp"] else None,
        )
        for code, c in sorted(by_rule.items())
    }
    summary["fp_by_class"] = dict(sorted(fp_by_class.items(), key=lambda kv: (-kv[1], kv[0])))
    clean = not (
        totals["fp"] or totals["unaudited"] or totals["lost_tp"]
        or summary["unjudged_safe_fixes"] or summary["breaking_safe_fixes"]
    )
    summary["ok"] = clean and not summary["errors"]

    if args.write_unaudited:
        write_unaudited(Path(args.write_unaudited), summary["unaudited"])

    if args.json:
        json.dump(summary, sys.stdout, indent=2)
        print()
    else:
        print_report(summary)
    if summary["errors"]:
        return 2
    return 0 if clean else 1


COUNTED = ("files", "findings", "tp", "fp", "unaudited", "lost_tp", "fixed_fp", "missed", "hunted", "hunted_found")


def precision(counts):
    """TP / (TP + FP) over the judged findings; None when nothing is judged."""
    judged = counts["tp"] + counts["fp"]
    return counts["tp"] / judged if judged else None


def recall(counts):
    """Reported true positives over those plus the hand-hunted bugs still missed; None without misses."""
    if not counts["missed"]:
        return None
    return counts["tp"] / (counts["tp"] + counts["missed"])


def hunted_recall(counts):
    """Of the bugs found by reading loops by hand, the share torchlint reports; None without a hunt."""
    return counts["hunted_found"] / counts["hunted"] if counts["hunted"] else None


def aliases(repo: Repo) -> set:
    names = {repo.name, repo.folder}
    names.add(repo.pypi[0] if repo.pypi else repo.name.split("/")[1])
    return {n.lower() for n in names}


def select_repos(audit: Audit, names, half=None):
    repos = [r for r in audit.repos.values() if half is None or r.half == half]
    if not names:
        return repos
    chosen = []
    for name in names:
        match = [r for r in repos if name.lower() in aliases(r)]
        if not match:
            known = ", ".join(r.name for r in repos)
            print(f"error: --repo {name}: not in the audit's manifest ({known})", file=sys.stderr)
            return None
        chosen.extend(r for r in match if r not in chosen)
    return chosen


def write_unaudited(path: Path, items):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(HEADER)
        for f in items:
            offered = {"safe": "safe-?", "unsafe": "unsafe"}.get(f["fix"], "none")
            w.writerow(
                [f["repo"], f["commit"], f["path"], f["line"], f["code"], "?", "", "msg: " + f["message"], offered]
            )


def _pct(x):
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _by_class(items):
    groups = collections.defaultdict(list)
    for it in items:
        groups[it.get("class") or "(none)"].append(it)
    return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def print_report(s):
    out = sys.stdout
    print(f"torchlint: {s['torchlint']}", file=out)
    print(f"audit:     {s['audit']}", file=out)
    print(file=out)
    cols = ("files", "findings", "tp", "fp", "unaudited", "lost_tp", "fixed_fp")
    heads = ("files", "findings", "TP", "FP", "unaudited", "lost TP", "fixed FP")
    width = max([len(r["repo"]) for r in s["repos"]] + [10])
    print(f"{'repository':<{width}}  {'commit':<12}" + "".join(f"{h:>10}" for h in heads), file=out)
    for r in s["repos"]:
        print(f"{r['repo']:<{width}}  {r['commit'][:12]:<12}" + "".join(f"{r[c]:>10}" for c in cols), file=out)
    t = s["totals"]
    print(f"{'total':<{width}}  {'':<12}" + "".join(f"{t.get(c, 0):>10}" for c in cols), file=out)
    print(file=out)
    tp, fp = t.get("tp", 0), t.get("fp", 0)
    print(f"precision: TP / (TP + FP) = {tp} / {tp + fp} = {_pct(s['precision'])}", file=out)
    if s["recall"] is not None:
        print(f"recall: TP / (TP + missed) = {tp} / {tp + t.get('missed', 0)} = {_pct(s['recall'])}", file=out)
    if s["hunted_recall"] is not None:
        print(
            f"hand-hunted bugs reported: {t.get('hunted_found', 0)} / {t.get('hunted', 0)} = {_pct(s['hunted_recall'])}",
            file=out,
        )
    if s["halves"]:
        print(file=out)
        heads = ("repos", "findings", "TP", "FP", "unaudited", "missed", "precision", "recall", "hunted")
        print(f"{'half':<9}" + "".join(f"{h:>10}" for h in heads), file=out)
        for half, c in s["halves"].items():
            print(
                f"{half:<9}"
                + "".join(f"{c.get(k, 0):>10}" for k in ("repos", "findings", "tp", "fp", "unaudited", "missed"))
                + f"{_pct(c['precision']):>10}{_pct(c['recall']):>10}"
                + (f"{c['hunted_found']:>6}/{c['hunted']:<3}" if c.get("hunted") else f"{'':>10}"),
                file=out,
            )
    if s["by_rule"]:
        print(file=out)
        heads = ("findings", "TP", "FP", "unaudited", "lost TP", "fixed FP", "precision")
        print(f"{'rule':<6}" + "".join(f"{h:>10}" for h in heads), file=out)
        for code, c in s["by_rule"].items():
            print(
                f"{code:<6}"
                + "".join(f"{c.get(k, 0):>10}" for k in ("findings", "tp", "fp", "unaudited", "lost_tp", "fixed_fp"))
                + f"{_pct(c['precision']):>10}",
                file=out,
            )
    if s["fp_by_class"]:
        print(file=out)
        print("false positives reported, by class:", file=out)
        for k, n in s["fp_by_class"].items():
            print(f"  {n:>4}  {k}", file=out)

    def where(it):
        return f"{it['repo']} {it['path']}:{it['line']}: {it['code']}"

    if s["unaudited"]:
        n = len(s["unaudited"])
        print(f"\nUNAUDITED findings ({n}): judge them (--write-unaudited FILE) and add them to the audit", file=out)
        for it in s["unaudited"]:
            print(f"  {where(it)} {it['message']}", file=out)
    for title, key in (
        ("SAFE FIXES NOT JUDGED (judge the --diff: fix column safe-ok or safe-breaks)", "unjudged_safe_fixes"),
        ("hand-hunted misses now reported (audit them as findings)", "found_misses"),
    ):
        if s[key]:
            print(f"\n{title} ({len(s[key])}):", file=out)
            for it in s[key]:
                print(f"  {where(it)} {it['message']}", file=out)
    for title, key in (
        ("SAFE FIXES THAT BREAK A PROGRAM, still offered as safe", "breaking_safe_fixes"),
        ("FALSE POSITIVES still reported", "false_positives"),
        ("LOST TRUE POSITIVES (audited TP no longer reported)", "lost_true_positives"),
        ("fixed false positives (audited FP no longer reported)", "fixed_false_positives"),
        ("hand-hunted bugs still missed", "misses"),
        ("hand-hunted sample: bugs not reported", "hunted_missed"),
    ):
        items = s[key]
        if not items:
            continue
        print(f"\n{title} ({len(items)}), by class:", file=out)
        for klass, group in _by_class(items):
            print(f"  [{klass}] ({len(group)})", file=out)
            for it in group:
                print(f"    {where(it)} -- {it['reason']}", file=out)
    if s["missing"]:
        print(f"\nmissing checkouts, skipped ({len(s['missing'])}):", file=out)
        for m in s["missing"]:
            print(f"  {m['repo']}: no folder {m['folder']}", file=out)
    for w in s["warnings"]:
        print(f"\nwarning: {w}", file=out)
    if s["errors"]:
        print(f"\nERRORS ({len(s['errors'])}):", file=out)
        for e in s["errors"]:
            print(f"  {e['repo']}: {e['error']}", file=out)
    print(file=out)
    if s["ok"]:
        print("OK: no false positive, no unaudited finding, no lost true positive.", file=out)
    else:
        bad = []
        if t.get("fp"):
            bad.append(f"{t['fp']} false positive(s)")
        if t.get("unaudited"):
            bad.append(f"{t['unaudited']} unaudited finding(s)")
        if t.get("lost_tp"):
            bad.append(f"{t['lost_tp']} lost true positive(s)")
        if s["unjudged_safe_fixes"]:
            bad.append(f"{len(s['unjudged_safe_fixes'])} unjudged safe fix(es)")
        if s["breaking_safe_fixes"]:
            bad.append(f"{len(s['breaking_safe_fixes'])} safe fix(es) that break a program")
        if s["errors"]:
            bad.append(f"{len(s['errors'])} failed run(s)")
        print("NOT CLEAN: " + ", ".join(bad) + ".", file=out)


# ---------------------------------------------------------------------------- checkouts


def git(*argv, cwd=None, input=None):
    return subprocess.run(["git", *argv], cwd=cwd, capture_output=True, text=True, input=input)


def make_checkouts(args, audit: Audit) -> int:
    checkouts = Path(args.checkouts)
    checkouts.mkdir(parents=True, exist_ok=True)
    repos = select_repos(audit, args.repo, args.half)
    if repos is None:
        return 2
    failed = 0
    for repo in repos:
        dest = checkouts / repo.folder
        if dest.exists():
            print(f"{repo.name}: {dest} exists, left as it is")
            continue
        if repo.pypi:
            failed += not copy_installed_package(repo, dest)
        else:
            failed += not clone(repo, dest, args.git_url_template)
    return 1 if failed else 0


def clone(repo: Repo, dest: Path, template: str) -> bool:
    owner, name = repo.name.split("/")
    url = template.format(owner=owner, name=name, repo=repo.name)
    print(f"{repo.name}: cloning {url} at {repo.commit[:12]} into {dest}")
    r = git("clone", "--quiet", "--no-checkout", url, str(dest))
    if r.returncode != 0:
        print(f"{repo.name}: git clone failed: {r.stderr.strip()}", file=sys.stderr)
        shutil.rmtree(dest, ignore_errors=True)
        return False
    if git("-C", str(dest), "cat-file", "-e", f"{repo.commit}^{{commit}}").returncode != 0:
        r = git("-C", str(dest), "fetch", "--quiet", "origin", repo.commit)
        if r.returncode != 0:
            print(f"{repo.name}: commit {repo.commit} not found in {url}: {r.stderr.strip()}", file=sys.stderr)
            return False
    r = git("-C", str(dest), "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", "-f", repo.commit)
    if r.returncode == 0:
        return True
    first = (r.stderr.strip().splitlines() or ["?"])[0]
    print(f"{repo.name}: warning: full checkout failed ({first}); checking out only the files torchlint reads")
    ls = git("-C", str(dest), "ls-tree", "-r", "--name-only", repo.commit)
    if ls.returncode != 0:
        print(f"{repo.name}: git ls-tree failed: {ls.stderr.strip()}", file=sys.stderr)
        return False
    wanted = [
        p for p in ls.stdout.splitlines() if p.endswith(TORCHLINT_READS) or p.rsplit("/", 1)[-1] in TORCHLINT_CONFIG
    ]
    if not wanted:
        return True
    r = git(
        "-C", str(dest), "checkout", "--quiet", "-f", repo.commit, "--pathspec-from-file=-", "--pathspec-file-nul",
        input="\0".join(wanted),
    )
    if r.returncode != 0:
        print(f"{repo.name}: checkout of the source files failed: {r.stderr.strip()}", file=sys.stderr)
        return False
    return True


def copy_installed_package(repo: Repo, dest: Path) -> bool:
    import importlib.metadata
    import importlib.util

    name, version = repo.pypi
    pip = f"{sys.executable} -m pip install --no-deps --target TMPDIR {name}=={version}"
    pip += f"  # then copy TMPDIR/{name} to {dest}"
    try:
        installed = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        installed = None
    if installed is None or installed.split("+")[0] != version:
        print(f"{repo.name}: installed {name} is {installed or 'absent'}, not {version}; get it with:\n  {pip}")
        return False
    spec = importlib.util.find_spec(name)  # finds the package without running its __init__
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        print(f"{repo.name}: cannot locate the installed {name} package; get it with:\n  {pip}")
        return False
    print(f"{repo.name}: copying {locations[0]} into {dest}")
    shutil.copytree(locations[0], dest, ignore=shutil.ignore_patterns("__pycache__"), symlinks=True)
    return True


# ---------------------------------------------------------------------------- main


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description="Compare torchlint's findings on public training code with the audit (module docstring).",
    )
    p.add_argument("checkouts", metavar="CHECKOUTS", help="folder holding one checkout per repository")
    p.add_argument("--audit", default=str(DEFAULT_AUDIT), help="audit CSV (default: %(default)s)")
    p.add_argument("--repo", action="append", metavar="NAME", help="only this repository (repeatable)")
    p.add_argument("--half", choices=HALVES, help="only the repositories of this half of the audit")
    p.add_argument("--json", action="store_true", help="print a JSON summary instead of the report")
    p.add_argument(
        "--hunted", metavar="FILE",
        help=f"the bugs found by reading loops by hand, reported or not (default: {DEFAULT_HUNTED.name} next to the audit)",
    )
    p.add_argument(
        "--write-unaudited", metavar="FILE", help="write the unaudited findings as audit rows with verdict ?"
    )
    p.add_argument(
        "--torchlint",
        metavar="CMD",
        help="how to run torchlint (default: this interpreter, -m torchlint, with this working tree first)",
    )
    p.add_argument(
        "--timeout", type=float, default=3600, help="seconds per repository before a run counts as failed"
    )
    p.add_argument(
        "--checkout", action="store_true", help="create the checkouts from the manifest instead of comparing"
    )
    p.add_argument(
        "--git-url-template",
        default=DEFAULT_GIT_URL,
        help="clone URL, with {owner} {name} {repo} (default: %(default)s)",
    )
    args = p.parse_args(argv)
    try:
        audit = load_audit(Path(args.audit))
    except AuditError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.checkout:
        return make_checkouts(args, audit)
    try:
        hunted = load_hunted(Path(args.hunted) if args.hunted else Path(args.audit).with_name(DEFAULT_HUNTED.name), audit)
    except AuditError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return compare(args, audit, hunted)


if __name__ == "__main__":
    sys.exit(main())
