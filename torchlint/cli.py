"""The `torchlint` command: flags to engine, fixer and reporter; owns the exit codes.

Exit codes: 0 no findings · 1 findings (or a non-empty `--diff`, or a file
that could not be read) · 2 usage error or internal error.

Heavy modules (libcst, the rules) are imported only once a command needs
them, so `torchlint --version` starts instantly.
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence

from torchlint import __version__, env_flag
from torchlint.text import split_lines

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
OUTPUT_FORMATS = ("full", "concise", "json", "sarif", "github")


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["--version"], ["-V"]):
        print(f"torchlint {__version__}")
        return EXIT_CLEAN
    try:
        if args[:1] == ["rule"]:
            return _rule_command(args[1:])
        if args[:1] == ["lsp"]:
            from torchlint.lsp import serve

            return serve(args[1:])
        if args[:1] == ["check"]:
            args = args[1:]
        return _check_command(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # whoever read the report stopped reading (`torchlint . | head`): nothing more can reach them, and the
        # interpreter's last flush must not fail again on its way out
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR


# --- torchlint rule ----------------------------------------------------------------


def _rule_command(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="torchlint rule", description="Show a rule's documentation.")
    parser.add_argument("selector", nargs="?", help="a rule code (TL003) or name (unscaled-accumulated-loss)")
    parser.add_argument("--all", action="store_true", help="every rule")
    parser.add_argument("--output-dir", metavar="DIR", help="write one Markdown page per rule into DIR")
    args = parser.parse_args(argv)
    from torchlint.docs import all_pages, page_markdown, write_docs
    from torchlint.registry import RULE_NAMES, SYNTAX_ERROR
    from torchlint.rules import ALL_RULES

    if args.output_dir:
        for page in write_docs(Path(args.output_dir), ALL_RULES):
            print(f"wrote {page}")
        return EXIT_CLEAN
    if args.all:
        print("\n".join(all_pages(ALL_RULES)), end="")
        return EXIT_CLEAN
    if not args.selector:
        parser.error("give a rule code, or --all")
    page = page_markdown(args.selector)
    if page is None:
        codes = ", ".join(code for code, _ in (SYNTAX_ERROR,) + RULE_NAMES)
        print(f"error: unknown rule `{args.selector}` (known: {codes})", file=sys.stderr)
        return EXIT_ERROR
    print(page, end="")
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
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="commands:\n"
               "  torchlint [check] PATH...     lint files and folders (the default command)\n"
               "  torchlint rule CODE | --all   print a rule's documentation\n"
               "  torchlint lsp                 run the Language Server on stdio, for editors\n"
               "                                (`torchlint lsp --help` for its options)",
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
    parser.add_argument("--config", metavar="FILE", help="use this pyproject.toml or torchlint.toml for every file")
    parser.add_argument("--stdin-filename", metavar="PATH", help="the name of the file read from standard input (`-`)")
    parser.add_argument("--statistics", action="store_true", help="count findings per rule instead of listing them")
    parser.add_argument("--no-cache", action="store_true", default=env_flag("TORCHLINT_NO_CACHE"),
                        help="analyse every file; neither read nor write the cache (or set TORCHLINT_NO_CACHE=1)")
    parser.add_argument("--cache-dir", metavar="DIR",
                        help="where to keep the cache (default: $TORCHLINT_CACHE_DIR, else ./.torchlint_cache)")
    parser.add_argument("-j", "--jobs", type=_jobs, default=os.environ.get("TORCHLINT_JOBS", "0"), metavar="N",
                        help="analyse files on N processes (default: $TORCHLINT_JOBS, else 0: one per CPU, on "
                             "Linux whenever two files or more are linted, elsewhere when there is enough to do; "
                             "1: all in this process)")
    parser.add_argument("--verbose", action="store_true", help="show tracebacks of internal errors")
    parser.add_argument("--version", action="version", version=f"torchlint {__version__}")
    return parser


def _jobs(value: str) -> int:
    try:
        jobs = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got `{value}`") from None
    if jobs < 0:
        raise argparse.ArgumentTypeError("must be 0 (one per CPU) or more")
    return jobs


@dataclass
class _Run:
    """What a check run has found so far."""

    diagnostics: list = field(default_factory=list)
    sources: Dict[str, str] = field(default_factory=dict)
    diffs: List[str] = field(default_factory=list)
    errors: int = 0  # internal errors, missing paths, refused writes: exit 2
    unreadable: int = 0
    fixed: int = 0

    def add(self, found: list, sources: Dict[str, str]) -> None:
        if found:
            self.diagnostics.extend(found)
            self.sources.update(sources)


def _check_command(argv: List[str]) -> int:
    args = _check_parser().parse_args(argv)
    from torchlint.config import ConfigError, Overrides, SettingsResolver
    from torchlint.cache import Cache, default_directory
    from torchlint.registry import check_selectors
    from torchlint.runner import start_relay

    select = _list_option(args.select)
    overrides = Overrides(
        select=tuple(select) if select is not None else None,
        ignore=tuple(_list_option(args.ignore) or ()),
        extend_select=tuple(_list_option(args.extend_select) or ()),
        respect_gitignore=False if args.no_respect_gitignore else None,
    )
    try:
        check_selectors((select or []) + list(overrides.ignore) + list(overrides.extend_select))
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    run = _Run()
    if args.paths == ["-"] or (args.stdin_filename and not args.paths):
        try:
            return _check_stdin(args, SettingsResolver(Path(args.config) if args.config else None), overrides)
        except ConfigError as error:
            print(f"error: {error}", file=sys.stderr)
            return EXIT_ERROR
    paths = args.paths or ["."]
    cache = None if args.no_cache else Cache(default_directory(args.cache_dir))
    # Many files ahead (a folder, or several files) on a cold run: start the workers now.
    relay = start_relay(args.jobs, cache) if len(paths) > 1 or any(os.path.isdir(p) for p in paths) else None
    try:
        return _check_paths(args, paths, overrides, cache, relay, run)
    finally:
        if relay is not None:
            relay.abandon()  # unless lint_files used it


def _check_paths(args, paths: List[str], overrides, cache, relay, run: "_Run") -> int:
    from torchlint.collector import young_collections_only
    from torchlint.config import ConfigError, SettingsResolver
    from torchlint.discover import Missing, discover
    from torchlint.runner import Task, lint_files

    try:
        resolver = SettingsResolver(Path(args.config) if args.config else None)
        root = resolver.for_path(Path(paths[0]))
        respect = root.respect_gitignore if overrides.respect_gitignore is None else overrides.respect_gitignore

        def excluded(path: Path, is_dir: bool) -> bool:
            return resolver.for_entry(path).is_excluded(path, is_dir)

        tasks: List[Task] = []
        named = {Path(path) for path in paths}  # always checked for syntax, even when also found in a folder

        def found() -> Iterator[Task]:
            for item in discover(paths, respect_gitignore=respect, excluded=excluded):
                if isinstance(item, Missing):
                    print(f"error: {item.path}: no such file or folder", file=sys.stderr)
                    run.errors += 1
                    continue
                task = Task(item, resolver.for_entry(item).codes_for(item, overrides), walked=item not in named)
                tasks.append(task)
                yield task

        # On a cold run the workers are there already (`start_relay`): they analyse the first files while the
        # walk goes on finding the others, unless a progress bar needs the count first.
        streamed = relay is not None and not _progress_shown()
        with young_collections_only():  # this process keeps what it reads of every file: see there
            if not streamed:
                for _ in found():
                    pass
            with _progress(len(tasks)) as advance:
                results = lint_files(found() if streamed else tasks, args.jobs, cache, advance, relay)
    except ConfigError as error:  # a configuration file the walk came to cannot be read
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    if cache is not None:
        cache.save()
    for task, result in zip(tasks, results):
        _take_result(task, result, args, run)
    return _finish(run, args)


PROGRESS_MIN_FILES = 200


def _progress_shown() -> bool:
    """Whether a long run may draw a progress bar: in a terminal, never in CI."""
    return sys.stderr.isatty() and not os.environ.get("CI")


@contextmanager
def _progress(total: int):
    """An `advance()` callback that draws a progress bar on stderr for long runs in a terminal (never in CI)."""
    if total < PROGRESS_MIN_FILES or not _progress_shown():
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("torchlint", total=total)
        yield lambda: progress.advance(task)


def _fixing(args) -> bool:
    return bool(args.fix or args.diff or args.unsafe_fixes)


def _take_result(task, lint, args, run: _Run) -> None:
    """Report one file's lint result; when fixing, fix the files that have something to fix."""
    if _fixing(args) and any(d.fixable(args.unsafe_fixes) for d in lint.diagnostics):
        from torchlint.rules import rules_by_codes

        result = _fix_file(task.path, rules_by_codes(task.codes), args, run.diffs)
        if result is None:
            run.unreadable += 1
            return
        found, sources, fixed, internal = result
        run.fixed += fixed
        run.errors += internal
        run.add(found, sources)
        return
    for problem in lint.problems:
        _report_problem(problem, args.verbose)
    run.unreadable += sum(1 for p in lint.problems if p.kind == "unreadable")
    run.errors += sum(1 for p in lint.problems if p.kind == "internal")
    run.add(list(lint.diagnostics), lint.program.frame_sources(lint.path) if lint.program else {})


def _check_stdin(args, resolver, overrides) -> int:
    """Lint (or fix) source read from standard input, as editors and formatters do."""
    from torchlint.engine import UnreadableFile, decode_source, lint_source
    from torchlint.fix import fix_source

    shown = args.stdin_filename or "-"
    path = Path(args.stdin_filename) if args.stdin_filename else Path.cwd() / "stdin.py"
    rules = resolver.for_path(path).rules_for(path, overrides)
    try:
        source = decode_source(sys.stdin.buffer.read(), shown)
    except UnreadableFile as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_FINDINGS
    run = _Run()
    if _fixing(args):
        outcome = fix_source(source.text, shown, rules, unsafe=args.unsafe_fixes)
        for problem in outcome.problems:
            _report_problem(problem, args.verbose)
        run.errors += sum(1 for p in outcome.problems if p.kind == "internal")
        if args.diff:
            if outcome.source != source.text:
                run.diffs.append(_unified_diff(shown, source.text, outcome.source))
            run.fixed = len(outcome.fixed)
            return _finish(run, args)
        # The fixed source goes to stdout, for the editor to take; findings go to stderr.
        sys.stdout.write(outcome.source)
        sys.stdout.flush()
        for diagnostic in outcome.remaining:
            print(f"{diagnostic.path}:{diagnostic.line}:{diagnostic.column}: {diagnostic.code} {diagnostic.message}",
                  file=sys.stderr)
        if run.errors:
            return EXIT_ERROR
        return EXIT_FINDINGS if outcome.remaining and not args.exit_zero else EXIT_CLEAN
    diagnostics, problems = lint_source(source.text, shown, rules)
    for problem in problems:
        _report_problem(problem, args.verbose)
    run.errors += sum(1 for p in problems if p.kind == "internal")
    run.add(diagnostics, {shown: source.text})
    return _finish(run, args)


def _finish(run: _Run, args) -> int:
    if args.diff:
        sys.stdout.write("".join(run.diffs))
        count = run.fixed
        print(f"Would fix {count} problem{'s' if count != 1 else ''}." if count else "No fixes available.",
              file=sys.stderr)
        if run.errors:
            return EXIT_ERROR
        return EXIT_FINDINGS if run.diffs or run.unreadable else EXIT_CLEAN
    _print_report(run.diagnostics, run.sources, args, run.fixed, run.unreadable, run.errors)
    if run.errors:
        return EXIT_ERROR
    if args.exit_zero:
        return EXIT_CLEAN
    return EXIT_FINDINGS if run.diagnostics or run.unreadable else EXIT_CLEAN


def _report_problem(problem, verbose: bool) -> None:
    print(f"error: {problem.message}", file=sys.stderr)
    if verbose and problem.detail:
        print(problem.detail, file=sys.stderr)


def _fix_file(path: Path, rules, args, diffs: List[str]):
    """Fix one file (or diff it); returns (remaining, frame sources, fixed count, internal errors) or None."""
    from torchlint.engine import UnreadableFile, decode_source, load_program, read_bytes
    from torchlint.fix import WriteRefused, fix_source, write_atomically
    from torchlint.notebook import NotebookError

    shown = str(path)
    try:
        original_bytes = read_bytes(path)
        source = decode_source(original_bytes, shown)
        program = load_program(path, source)
    except UnreadableFile as error:
        print(f"error: {error}", file=sys.stderr)
        return None
    if program is None:
        return [], {}, 0, 0
    outcome = fix_source(program.text, shown, rules, unsafe=args.unsafe_fixes)
    internal = 0
    for problem in outcome.problems:
        _report_problem(problem, args.verbose)
        internal += problem.kind == "internal"
    if any(problem.kind == "unreadable" for problem in outcome.problems):
        return None
    for diagnostic, reason in outcome.dropped:
        print(f"warning: {shown}:{diagnostic.line}: fix for {diagnostic.code} dropped: {reason}", file=sys.stderr)
    if not outcome.converged:
        print(f"warning: {shown}: fixes did not converge; some fixable findings remain", file=sys.stderr)
    if outcome.source == program.text:
        return program.to_file(outcome.remaining), program.frame_sources(shown), 0, internal
    try:
        new_text = program.file_text(outcome.source)
        fixed_program = load_program(path, replace(source, text=new_text))
    except (NotebookError, UnreadableFile) as error:
        print(f"error: {shown}: fixes not written: {error}", file=sys.stderr)
        return program.to_file(outcome.remaining + outcome.fixed), program.frame_sources(shown), 0, internal + 1
    if args.diff:
        diffs.append(_unified_diff(shown, source.text, new_text))
    else:
        try:
            write_atomically(path, new_text, source, original_bytes)
        except (WriteRefused, OSError) as error:
            reason = error if isinstance(error, WriteRefused) else f"{shown}: fixes not written: {error.strerror or error}"
            print(f"error: {reason}", file=sys.stderr)
            return program.to_file(outcome.remaining + outcome.fixed), program.frame_sources(shown), 0, internal + 1
    return fixed_program.to_file(outcome.remaining), fixed_program.frame_sources(shown), len(outcome.fixed), internal


def _unified_diff(path: str, before: str, after: str) -> str:
    import difflib

    lines = difflib.unified_diff(
        split_lines(before), split_lines(after), fromfile=f"a/{path}", tofile=f"b/{path}"
    )
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    return text


def _use_colour() -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


def _print_report(diagnostics, sources: Dict[str, str], args, fixed_count: int, unreadable: int = 0,
                  errors: int = 0) -> None:
    from torchlint.report import MACHINE_FORMATS, REPORTERS, render_statistics

    diagnostics.sort(key=lambda d: (d.path, d.cell or 0, d.line, d.column, d.code))
    colour = _use_colour()
    if args.statistics:
        sys.stdout.write(render_statistics(diagnostics, as_json=args.output_format == "json"))
    else:
        sys.stdout.write(REPORTERS[args.output_format](diagnostics, sources, colour))
    if args.output_format in MACHINE_FORMATS:
        return
    if args.output_format == "full" and diagnostics and not args.statistics:
        print()
    if fixed_count:
        print(f"Fixed {fixed_count} problem{'s' if fixed_count != 1 else ''}.")
    if unreadable:
        print(f"{unreadable} file{'s' if unreadable != 1 else ''} could not be read (see the errors above).")
    if not diagnostics:
        if not (unreadable or errors):  # never claim success over an error printed above
            print("All checks passed.")
        return
    count = len(diagnostics)
    safe = sum(1 for d in diagnostics if d.fixable())
    unsafe = sum(1 for d in diagnostics if d.fix is not None and not d.fix.is_safe)
    print(f"Found {count} problem{'s' if count != 1 else ''} ({safe} fixable with --fix).")
    if unsafe and not args.unsafe_fixes:
        print(f"{unsafe} more fixable with --unsafe-fixes.")
