"""bench/anatomy.py: where the analysis time of a cold run goes, measured file by file in one process."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_anatomy_splits_the_time_of_the_examples_and_counts_what_libcst_was_given():
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "anatomy.py"), str(ROOT / "examples")],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    found = re.search(r"^(\d+) files, (\d+) past the prefilter, (\d+) given to LibCST \((\d+) as sparse programs, "
                      r"(\d+) whole\)$", done.stdout, re.MULTILINE)
    assert found is not None, done.stdout
    files, passed, parsed, sparse, whole = map(int, found.groups())
    examples = len(list((ROOT / "examples").glob("*.py"))) + len(list((ROOT / "examples").glob("*.ipynb")))
    assert files == examples and 0 < parsed <= passed <= files and sparse + whole == parsed
    shares = re.findall(r"^\| (.+?) \| (\d+\.\d) \| (\d+)% \|$", done.stdout, re.MULTILINE)
    assert [part for part, _, _ in shares] == [
        "reading and the prefilter (the main process's, with the project index it builds)",
        "screen: prefilter, CPython's parse, loop gate, sparse program",
        "LibCST's parse of the linted files' programs",
        "LibCST's parse of other files of their projects",
        "the rest of the analysis: facts and rules",
    ]
    assert 95 <= sum(int(share) for _, _, share in shares) <= 105  # rounded shares of one total
    given = re.search(r"LibCST was given ([\d,]+) characters of the ([\d,]+) in the files it parsed \((\d+)%\)",
                      done.stdout)
    assert given is not None and 0 < int(given.group(1).replace(",", "")) <= int(given.group(2).replace(",", ""))
    # what a gate before LibCST could save at most: the parse and analysis of the files that found nothing
    fruit = re.search(r"^(\d+) of the (\d+) files given to LibCST have a finding; LibCST's parse and the analysis of "
                      r"the other (\d+) took (\d+\.\d) s of their (\d+\.\d) s \((\d+)%\)$", done.stdout, re.MULTILINE)
    assert fruit is not None, done.stdout
    found_some, given_files, without = map(int, fruit.groups()[:3])
    assert given_files == parsed and found_some + without == parsed and 0 < found_some  # the examples hold bugs
    assert float(fruit.group(4)) <= float(fruit.group(5)) and 0 <= int(fruit.group(6)) <= 100
