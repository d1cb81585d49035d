"""Where a cold run's analysis time goes, file by file, in one process: the screen, LibCST's parse, the rest.

For every Python file and notebook under the folders given (as a cold run finds them, `.gitignore` not
respected), it does what a worker does with a job: `engine.screen` (the prefilter, CPython's parse, the loop
gate, the sparse program), then `engine.analyse` on what the screen kept, and measures CPU time around each.
LibCST's parse is timed apart, for the linted file's program and for the other files of its project that the
facts read (`project.files`), and so is the main process's share of the work (reading, the project index)
that a worker takes for granted. It also counts the characters LibCST is given against the files' own.

    python bench/anatomy.py /path/to/codebases            # a Markdown table on stdout
    python bench/anatomy.py --every 3 /path/to/codebases  # every third file only

The figures are CPU seconds of this one process, with no pool and no cache: they say what share of a cold
run each part takes, not how long a run takes (`bench.py` measures that, next to Ruff).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torchlint.parse  # noqa: E402 - after the path above
import torchlint.project.files  # noqa: E402
from torchlint.collector import collector_paused  # noqa: E402
from torchlint.discover import discover  # noqa: E402
from torchlint.engine import (  # noqa: E402
    Screened, UnreadableFile, analyse, load_program, read_source, screen, skipped_unparsed,
)
from torchlint.rules import select_rules  # noqa: E402

_PARSED: Counter = Counter()  # "file" (a linted file's program) / "other file" (`project.files`) -> CPU seconds
_GIVEN: Counter = Counter()  # the same -> characters LibCST was given, line breaks aside
_PARSE = torchlint.parse.parse_module


def _timed_parse(kind: str):
    """`parse_module`, timed and counted under `kind`."""

    def parse(text: str):
        start = time.process_time()
        try:
            return _PARSE(text)
        finally:
            _PARSED[kind] += time.process_time() - start
            _GIVEN[kind] += len(text) - text.count("\n")

    return parse


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--every", type=int, default=1, help="analyse every Nth file only (default: all)")
    args = parser.parse_args(argv)
    torchlint.parse.parse_module = _timed_parse("file")  # `engine.analyse` imports it when it runs
    torchlint.project.files.parse_module = _timed_parse("other file")  # imported there once, by this name
    rules = select_rules()
    seconds: Counter = Counter()
    counts: Counter = Counter()
    fruitless = 0.0  # seconds of LibCST's parse and the analysis of the files that found nothing
    paths = [item for item in discover(args.folders, respect_gitignore=False) if isinstance(item, Path)]
    for path in paths[::args.every]:
        shown = str(path)
        counts["found"] += 1
        start = time.process_time()
        try:
            program = load_program(path, read_source(path), walked=True)
        except UnreadableFile:
            continue
        # as `runner.lint_files`: a file of a walk that cannot train never reaches a worker
        skipped = program is None or (skipped_unparsed(program.text, True, shown) and not program.cell_syntax_errors)
        seconds["read"] += time.process_time() - start
        if skipped:
            continue
        counts["files"] += 1
        counts["characters"] += len(program.text) - program.text.count("\n")
        with collector_paused():
            start = time.process_time()
            screened = screen(program.text, shown)
            seconds["screen"] += time.process_time() - start
            if not isinstance(screened, Screened):
                continue
            counts["parsed"] += 1
            counts["parsed file characters"] += len(screened.text) - screened.text.count("\n")
            counts["sparse" if screened.program is not screened.text else "whole"] += 1
            start = time.process_time()
            before = _PARSED["file"] + _PARSED["other file"]
            diagnostics, _ = analyse(screened, shown, rules)
            spent = time.process_time() - start
            seconds["analyse"] += spent - (_PARSED["file"] + _PARSED["other file"] - before)
            # what a gate before LibCST could save at most: the files whose parse and analysis find nothing
            counts["with findings" if diagnostics else "without"] += 1
            fruitless += 0 if diagnostics else spent
    total = sum(seconds.values()) + _PARSED["file"] + _PARSED["other file"]
    rows = [
        ("reading and the prefilter (the main process's, with the project index it builds)", seconds["read"]),
        ("screen: prefilter, CPython's parse, loop gate, sparse program", seconds["screen"]),
        ("LibCST's parse of the linted files' programs", _PARSED["file"]),
        ("LibCST's parse of other files of their projects", _PARSED["other file"]),
        ("the rest of the analysis: facts and rules", seconds["analyse"]),
    ]
    print(f"{counts['found']} files, {counts['files']} past the prefilter, {counts['parsed']} given to LibCST "
          f"({counts['sparse']} as sparse programs, {counts['whole']} whole)\n")
    print("| part | CPU s | share |\n|---|--:|--:|")
    for name, value in rows:
        print(f"| {name} | {value:.1f} | {value / total:.0%} |" if total else f"| {name} | 0 | - |")
    print(f"| total | {total:.1f} | |\n")
    given, own = _GIVEN["file"], counts["parsed file characters"]
    print(f"LibCST was given {given:,} characters of the {own:,} in the files it parsed "
          f"({given / own:.0%})" if own else "LibCST parsed nothing", end="")
    print(f", and {_GIVEN['other file']:,} of other files of their projects.")
    analysed = _PARSED["file"] + _PARSED["other file"] + seconds["analyse"]
    if counts["parsed"]:
        print(f"{counts['with findings']} of the {counts['parsed']} files given to LibCST have a finding; LibCST's "
              f"parse and the analysis of the other {counts['without']} took {fruitless:.1f} s of "
              f"their {analysed:.1f} s ({fruitless / analysed:.0%})" if analysed else "")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
