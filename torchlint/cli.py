"""The `torchlint` command: flags to engine, fixer and reporter; owns the exit codes.

Exit codes: 0 no findings · 1 findings (or a non-empty `--diff`, or a file
that could not be read) · 2 usage error or internal error.

Heavy modules (libcst, the rules) are imported only once a command needs
them, so `torchlint --version` starts instantly.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from torchlint import __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
OUTPUT_FORMATS = ("full", "concise", "json")


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["--version"], ["-V"]):
        print(f"torchlint {__version__}")
        return EXIT_CLEAN
    try:
        if args[:1] == ["rule"]:
            return _rule_command(args[1:])
        if args[:1] == ["check"]:
            args = args[1:]
        return _check_command(args)
    except KeyboardInterrupt:
        return 130


# --- torchlint rule ----------------------------------------------------------------


def _rule_command(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="torchlint rule", description="Show a rule's documentation.")
    parser.add_argument("selector", nargs="?", help="a rule code (TL003) or name (unscaled-accumulated-loss)")
    parser.add_argument("--all", action="store_true", help="every rule")
    parser.add_argument("--output-dir", metavar="DIR", help="write one Markdown page per rule into DIR")
    args = parser.parse_args(argv)
    from torchlint.docs import rule_markdown, write_docs
    from torchlint.rules import ALL_RULES, rule_by_selector

    if args.output_dir:
        for page in write_docs(Path(args.output_dir), ALL_RULES):
            print(f"wrote {page}")
        return EXIT_CLEAN
    if args.all:
        print("\n".join(rule_markdown(rule) for rule in ALL_RULES), end="")
        return EXIT_CLEAN
    if not args.selector:
        parser.error("give a rule code, or --all")
    rule = rule_by_selector(args.selector)
    if rule is None:
        codes = ", ".join(r.code for r in ALL_RULES)
        print(f"error: unknown rule `{args.selector}` (known: {codes})", file=sys.stderr)
        return EXIT_ERROR
    print(rule_markdown(rule), end="")
    return EXIT_CLEAN


# --- torchlint check -----------------------------------------------------------------


def _list_option(values: Optional[List[str]]) -> Optional[List[str]]:
    if values is None:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def _check_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torchlint",
        description="Find (and fix) the gradient bugs of PyTorch training loops.",
        epilog="Subcommands: `torchlint check PATH...` (the default), `torchlint rule CODE|--all`.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to lint (default: .)")
    parser.add_argument("--fix", action="store_true", help="apply safe fixes in place, then report what is left")
    parser.add_argument("--unsafe-fixes", action="store_true", help="apply fixes marked unsafe too (implies --fix)")
    parser.add_argument("--diff", action="store_true", help="print the diff --fix would write; write nothing")
    parser.add_argument("--select", action="append", metavar="CODES", help="only these codes, prefixes or names")
    parser.add_argument("--extend-select", action="append", metavar="CODES", help="add to the selection")
    parser.add_argument("--ignore", action="append", metavar="CODES", help="skip these codes, prefixes or names")
    parser.add_argument("--output-format", choices=OUTPUT_FORMATS, default="full")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    parser.add_argument("--no-respect-gitignore", action="store_true", help="lint files .gitignore excludes")
    parser.add_argument("--verbose", action="store_true", help="show tracebacks of internal errors")
    parser.add_argument("--version", action="version", version=f"torchlint {__version__}")
    return parser


def _check_command(argv: List[str]) -> int:
    args = _check_parser().parse_args(argv)
    from torchlint.discover import Missing, discover
    from torchlint.engine import lint_path
    from torchlint.rules import check_selectors, select_rules

    select, ignore, extend = _list_option(args.select), _list_option(args.ignore) or [], _list_option(
        args.extend_select) or []
    try:
        check_selectors((select or []) + ignore + extend)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    rules = select_rules(select, ignore, extend)
    fixing = args.fix or args.diff or args.unsafe_fixes

    diagnostics, sources, errors = [], {}, 0
    unreadable = fixed_count = 0
    diffs: List[str] = []
    for item in discover(args.paths or ["."], respect_gitignore=not args.no_respect_gitignore):
        if isinstance(item, Missing):
            print(f"error: {item.path}: no such file or folder", file=sys.stderr)
            errors += 1
            continue
        if fixing:
            result = _fix_file(item, rules, args, diffs)
            if result is None:
                unreadable += 1
                continue
            found, text, fixed, internal = result
            fixed_count += fixed
            errors += internal
        else:
            lint = lint_path(item, rules)
            for problem in lint.problems:
                _report_problem(problem, args.verbose)
            unreadable += sum(1 for p in lint.problems if p.kind == "unreadable")
            errors += sum(1 for p in lint.problems if p.kind == "internal")
            found, text = list(lint.diagnostics), lint.source.text if lint.source else ""
        if found:
            diagnostics.extend(found)
            sources[found[0].path] = text

    if args.diff:
        sys.stdout.write("".join(diffs))
        count = fixed_count
        print(f"Would fix {count} problem{'s' if count != 1 else ''}." if count else "No fixes available.",
              file=sys.stderr)
        if errors:
            return EXIT_ERROR
        return EXIT_FINDINGS if diffs else EXIT_CLEAN

    _print_report(diagnostics, sources, args, fixed_count)
    if errors:
        return EXIT_ERROR
    if args.exit_zero:
        return EXIT_CLEAN
    return EXIT_FINDINGS if diagnostics or unreadable else EXIT_CLEAN


def _report_problem(problem, verbose: bool) -> None:
    print(f"error: {problem.message}", file=sys.stderr)
    if verbose and problem.detail:
        print(problem.detail, file=sys.stderr)


def _fix_file(path: Path, rules, args, diffs: List[str]):
    """Fix one file (or diff it); returns (remaining, new text, fixed count, internal errors) or None."""
    from torchlint.engine import UnreadableFile, read_source
    from torchlint.fix import WriteRefused, fix_source, write_atomically

    shown = str(path)
    try:
        original_bytes = path.read_bytes()
        source = read_source(path)
    except (UnreadableFile, OSError) as error:
        message = str(error) if isinstance(error, UnreadableFile) else f"{path}: cannot read ({error})"
        print(f"error: {message}", file=sys.stderr)
        return None
    outcome = fix_source(source.text, shown, rules, unsafe=args.unsafe_fixes)
    internal = 0
    for problem in outcome.problems:
        _report_problem(problem, args.verbose)
        internal += problem.kind == "internal"
    for diagnostic, reason in outcome.dropped:
        print(f"warning: {shown}:{diagnostic.line}: fix for {diagnostic.code} dropped: {reason}", file=sys.stderr)
    if not outcome.converged:
        print(f"warning: {shown}: fixes did not converge; some fixable findings remain", file=sys.stderr)
    if outcome.source != source.text:
        if args.diff:
            diffs.append(_unified_diff(shown, source.text, outcome.source))
        else:
            try:
                write_atomically(path, outcome.source, source, original_bytes)
            except (WriteRefused, OSError) as error:
                print(f"error: {error}", file=sys.stderr)
                return outcome.remaining + outcome.fixed, source.text, 0, internal + 1
    return outcome.remaining, outcome.source, len(outcome.fixed), internal


def _unified_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=f"a/{path}", tofile=f"b/{path}"
    )
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    return text


def _use_colour() -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


def _print_report(diagnostics, sources: Dict[str, str], args, fixed_count: int) -> None:
    from torchlint.report import REPORTERS

    diagnostics.sort(key=lambda d: (d.path, d.line, d.column, d.code))
    colour = _use_colour()
    sys.stdout.write(REPORTERS[args.output_format](diagnostics, sources, colour))
    if args.output_format == "json":
        return
    if args.output_format == "full" and diagnostics:
        print()
    if fixed_count:
        print(f"Fixed {fixed_count} problem{'s' if fixed_count != 1 else ''}.")
    if not diagnostics:
        print("All checks passed.")
        return
    count = len(diagnostics)
    safe = sum(1 for d in diagnostics if d.fixable())
    unsafe = sum(1 for d in diagnostics if d.fix is not None and not d.fix.is_safe)
    print(f"Found {count} problem{'s' if count != 1 else ''} ({safe} fixable with --fix).")
    if unsafe and not args.unsafe_fixes:
        print(f"{unsafe} more fixable with --unsafe-fixes.")
