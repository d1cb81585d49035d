"""Lint one file: read it, parse it once, build its loop facts once, run the rules.

Pure: no printing and no exit codes. Problems that are not findings (a file
that cannot be read, a rule that crashed) come back as `Problem`s for the
caller to report.
"""

from __future__ import annotations

import codecs
import functools
import ast
import io
import os
import re
import stat
import tokenize
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import AbstractSet, FrozenSet, TYPE_CHECKING, Callable, Dict, List, Optional, Sequence, Set, Tuple, Type, Union

from torchlint import env_flag
from torchlint.collector import collector_paused
from torchlint.model import ERROR, Diagnostic
from torchlint.pywalk import calls
from torchlint.text import split_lines

if TYPE_CHECKING:
    from torchlint.incremental import IncrementalParser

# A file that cannot hold a training loop is never analysed (only checked for
# syntax, by CPython, when it is named: see `checks_syntax`): RULES.md defines a
# training loop by a call of `backward(...)` (`loss.backward()`,
# `torch.autograd.backward`, `accelerator.backward`, `manual_backward`) or of
# `autograd.grad(...)`, and every one of them spells `backward(` or `grad(`.
_PREFILTER = re.compile(r"backward\s*\(|\bgrad\s*\(")
_BACKWARD_CALL = re.compile(r"backward\s*\(")
_GRAD_CALL = re.compile(r"grad\s*\(")
# Debugging switch: analyse every file, even those the prefilter or the loop gate would skip.
_NO_PREFILTER_ENV = "TORCHLINT_NO_PREFILTER"
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z0-9_\-]+(?:\s*,\s*[A-Za-z0-9_\-]+)*))?", re.IGNORECASE)
_FILE_NOQA = re.compile(r"^\s*#\s*torchlint:\s*noqa\s*$", re.IGNORECASE | re.MULTILINE)
_ENCODING_HINT = "save it as UTF-8 or declare its encoding with a `# -*- coding: ... -*-` line"
MAX_FILE_BYTES = 20 * 1024 * 1024
# Parsing costs about 500 bytes of memory per byte of source, so in a file over LARGE_FILE_BYTES a
# top-level statement over LARGE_STATEMENT_BYTES that cannot hold a training loop (generated data) is
# blanked before parsing, and a file that still holds over MAX_PARSE_BYTES of code is skipped.
LARGE_FILE_BYTES = 1024 * 1024
LARGE_STATEMENT_BYTES = 64 * 1024
MAX_PARSE_BYTES = 2 * 1024 * 1024
# Up to this size CPython's tree of a whole file (about 90 bytes per byte) is built before any blanking.
AST_FIRST_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class SourceText:
    """Decoded file content and what is needed to write it back byte-identical."""

    text: str
    encoding: str
    bom: bool


@dataclass(frozen=True)
class Problem:
    """Something the user must hear about that is not a finding."""

    path: str
    message: str
    kind: str  # unreadable | internal
    detail: str = ""


@dataclass(frozen=True)
class LintResult:
    path: str
    diagnostics: Tuple[Diagnostic, ...] = ()
    problems: Tuple[Problem, ...] = ()
    source: Optional[SourceText] = field(default=None, compare=False)
    program: Optional["Program"] = field(default=None, compare=False)


class UnreadableFile(Exception):
    pass


def decode_source(data: bytes, path: str) -> SourceText:
    """Decode like Python does: BOM, then a coding cookie, then UTF-8."""
    if b"\x00" in data[:8192]:
        raise UnreadableFile(f"{path}: looks like a binary file (contains NUL bytes), not Python source")
    try:
        encoding = _plain_utf8(data) or tokenize.detect_encoding(io.BytesIO(data).readline)[0]
    except SyntaxError as error:
        # tokenize found bytes that are not UTF-8 in the lines a coding cookie may occupy.
        raise UnreadableFile(f"{path}: cannot decode as utf-8 ({error}); {_ENCODING_HINT}") from None
    bom = data.startswith(codecs.BOM_UTF8)
    if bom:
        data = data[len(codecs.BOM_UTF8):]
        encoding = "utf-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        raise UnreadableFile(f"{path}: cannot decode as {encoding} (byte {error.start}); {_ENCODING_HINT}") from None
    except LookupError:
        raise UnreadableFile(f"{path}: unknown encoding `{encoding}` in its coding declaration") from None
    return SourceText(text, encoding, bom)


def _plain_utf8(data: bytes) -> Optional[str]:
    """"utf-8" when `tokenize.detect_encoding` would say so without reading the lines itself: no BOM, and no
    `coding` in the two lines a cookie may be on, which are UTF-8 (nearly every file); else None, and it reads
    them (the tokenizer's helper, in Python, was a tenth of the reading of a file)."""
    end = data.find(b"\n")
    end = data.find(b"\n", end + 1) if end >= 0 else -1
    head = data if end < 0 else data[:end]
    if data.startswith(codecs.BOM_UTF8) or b"coding" in head:
        return None
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return "utf-8"


def encode_source(text: str, original: SourceText) -> bytes:
    data = text.encode(original.encoding)
    return codecs.BOM_UTF8 + data if original.bom else data


def read_bytes(path: Path) -> bytes:
    """A file's bytes, or UnreadableFile with one clear message (never blocks on a FIFO or device)."""
    try:
        status = path.stat()
        if stat.S_ISDIR(status.st_mode):
            raise IsADirectoryError
        if not stat.S_ISREG(status.st_mode):
            raise UnreadableFile(f"{path}: not a regular file (a FIFO, socket or device); skipped")
        size = status.st_size
        if size > MAX_FILE_BYTES:
            raise UnreadableFile(f"{path}: file is {size // (1024 * 1024)} MB, over the {MAX_FILE_BYTES // (1024 * 1024)} MB limit; skipped")
        return path.read_bytes()
    except UnreadableFile:
        raise
    except IsADirectoryError:
        raise UnreadableFile(f"{path}: is a directory, not a file") from None
    except PermissionError:
        raise UnreadableFile(f"{path}: permission denied") from None
    except FileNotFoundError:
        if path.is_symlink():
            raise UnreadableFile(f"{path}: broken symbolic link (its target does not exist)") from None
        raise UnreadableFile(f"{path}: no such file") from None
    except OSError as error:
        raise UnreadableFile(f"{path}: cannot read ({error.strerror or error})") from None


def read_source(path: Path) -> SourceText:
    return decode_source(read_bytes(path), str(path))


class ParseDeferred(Exception):
    """Raised by `lint_source(..., parse_limit=N)` instead of building LibCST's tree of over N characters of code."""


def lint_source(text: str, path: str, rules: Sequence[Type], parser: Optional["IncrementalParser"] = None,
                parse_limit: Optional[int] = None, dependencies: Optional[List[str]] = None
                ) -> Tuple[List[Diagnostic], List[Problem]]:
    """Findings for one source text; rule crashes come back as problems.

    `parser`: an `IncrementalParser` that parsed earlier versions of this text (the language server's).
    `parse_limit`: raise `ParseDeferred` rather than have LibCST parse more characters than that
    (the part of a file the sparse parse keeps; a tree of 200 KB takes about a hundred megabytes);
    what needs no parse is still answered.
    `dependencies`, if given, receives the other files of the project the findings rest on (see `analyse`).
    """
    with collector_paused():
        screened = screen(text, path, parser)
        if not isinstance(screened, Screened):
            return screened
        return analyse(screened, path, rules, parser, parse_limit, dependencies)


@dataclass(frozen=True)
class Screened:
    """A text that may hold a training loop: `text` (large data blanked), `program`, what LibCST is to
    parse of it (`torchlint.sparse`), and the first line of each of the module's statements, if known."""

    text: str
    program: str
    statement_lines: Optional[List[int]]
    # the names a call of a loop must be spelled with for the loop to train (`_gated_loops`); None: any call may
    trainers: Optional[FrozenSet[str]] = None

    @property
    def parse_size(self) -> int:
        """The characters of `program` other than line breaks: what the size of LibCST's tree follows."""
        return len(self.program) - self.program.count("\n")


def screen(text: str, path: str, parser: Optional["IncrementalParser"] = None
           ) -> Union[Screened, Tuple[List[Diagnostic], List[Problem]]]:
    """What LibCST must parse of `text`; or the outcome, when it need not parse anything. Never imports LibCST.

    `text` is always checked for syntax (see `checks_syntax`): a text that cannot hold a training loop is
    parsed by CPython only, and goes on to LibCST only when CPython rejects it, for LibCST to report (TL000).
    """
    if _file_noqa(text):
        return [], []
    filtering = prefiltering()
    if filtering and not may_train(text, path):
        return _syntax_checked(text)
    if filtering and LARGE_FILE_BYTES < len(text) <= AST_FIRST_BYTES and not _candidate_loops_in(text, path):
        return [], []  # the loop gate is cheaper than finding the data statements to blank
    if len(text) > LARGE_FILE_BYTES:
        text, kept = _without_large_data(text)
        if kept > MAX_PARSE_BYTES:
            return [], [Problem(path, f"{path}: {kept // (1024 * 1024)} MB of code that may hold training loops, over the "
                                      f"{MAX_PARSE_BYTES // (1024 * 1024)} MB that can be analysed; skipped", "unreadable")]
    tree = _python_tree(text) if filtering else None
    loops, trainers = _gated_loops(tree, text, path) if tree is not None else ([], None)
    if tree is not None and not loops:
        return [], []
    program, statement_lines = text, (_statement_lines(tree) if tree is not None else None)
    if tree is not None and parser is None:
        from torchlint.sparse import sparse_program

        sparse = sparse_program(text, tree, loops)
        if sparse is not None:
            program, statement_lines = sparse
    return Screened(text, program, statement_lines, trainers)


def analyse(screened: Screened, path: str, rules: Sequence[Type], parser: Optional["IncrementalParser"] = None,
            parse_limit: Optional[int] = None, dependencies: Optional[List[str]] = None
            ) -> Tuple[List[Diagnostic], List[Problem]]:
    """Parse what `screen` kept and run the rules on it (see `lint_source`). `dependencies`, if given, receives
    the other files of the project the facts read (`torchlint.project`): the findings rest on them too."""
    import libcst as cst

    from torchlint.parse import parse_module
    from torchlint.rules import SYNTAX_ERROR
    from torchlint.walk import remembering

    text, statement_lines = screened.text, screened.statement_lines
    if parse_limit is not None and screened.parse_size > parse_limit:
        raise ParseDeferred(path)
    try:
        module = parser.parse(text, statement_lines) if parser is not None else parse_module(screened.program)
    except cst.ParserSyntaxError as error:
        if _python_tree(text) is not None:
            # Python runs it (LibCST's tokenizer is stricter about tabs mixed into indentation, say): no syntax
            # error to report, and nothing torchlint can analyse.
            first = str(error.message).strip().splitlines()[0] if str(error.message).strip() else "parse error"
            return [], [Problem(path, f"{path}: not analysed: Python runs this code, but torchlint's parser "
                                      f"(LibCST) cannot read it ({first})", "unreadable")]
        message, line, column = _python_syntax_error(text) or (
            f"SyntaxError: {error.message}", max(error.raw_line, 1), error.raw_column + 1)
        code, name = SYNTAX_ERROR
        return [Diagnostic(code, name, ERROR, message, path, line, column, line, column + 1)], []
    except (RecursionError, MemoryError) as error:
        return [], [Problem(path, f"{path}: cannot parse: {type(error).__name__}", "unreadable")]
    with remembering():  # the facts and the rules walk the same nodes again and again
        return _checked(screened, path, rules, module, None if parser is not None else screened.program,
                        dependencies)


def _checked(screened: Screened, path: str, rules: Sequence[Type], module, program: Optional[str],
             dependencies: Optional[List[str]]) -> Tuple[List[Diagnostic], List[Problem]]:
    """The findings of `rules` in the parsed `module` of `screened` (`analyse`); `program`: the text LibCST
    parsed, when it is not the file's."""
    from torchlint.context import FileContext

    try:
        context = FileContext(path, screened.text, module, screened.statement_lines, program, screened.trainers)
    except Exception as error:  # noqa: BLE001 - a crash in shared analysis must not stop the run
        detail = traceback.format_exc()
        return [], [Problem(path, f"{path}: internal error while analysing loops: {type(error).__name__}: {error}",
                            "internal", detail)]

    diagnostics: List[Diagnostic] = []
    problems: List[Problem] = []
    for rule in rules:
        try:
            found = list(rule().check(context))
            for finding in found:
                line, column, end_line, end_column = context.span(finding.node)
                message, fix = finding.message, finding.fix
                # the other loops that reach this place with the same finding (a helper they all call): one
                # finding stands for them all (`_one_per_site`), and says so
                also = [other.loop for other in found if other is not finding and other.loop is not None
                        and other.node is finding.node and other.message == finding.message]
                elsewhere = context.where_the_rest_runs(finding.node, finding.loop, also)
                if elsewhere is not None:  # a loop that spans functions: say where; no edit across them
                    message = f"{message} {elsewhere}"
                    fix = None if context.crosses_functions(fix) else fix
                diagnostics.append(
                    Diagnostic(rule.code, rule.name, finding.severity or rule.severity, message, path,
                               line, column, end_line, end_column, fix, timeline=finding.timeline)
                )
        except Exception as error:  # noqa: BLE001 - one rule's crash must not hide the others
            problems.append(Problem(path, f"{path}: rule {rule.code} ({rule.name}) crashed: "
                                          f"{type(error).__name__}: {error}", "internal", traceback.format_exc()))
    diagnostics = [d for d in _one_per_site(diagnostics) if not _suppressed(d, context.lines)]
    diagnostics.sort(key=lambda d: (d.line, d.column, d.code))
    if dependencies is not None and context.names.project is not None:
        dependencies.extend(sorted(context.names.project.used))
    return diagnostics, problems


def _one_per_site(diagnostics: List[Diagnostic]) -> List[Diagnostic]:
    """One finding of a rule per place: a helper function that several loops call (a test's `_backprop()` called
    from six test loops) is one bug in one place, reported once (with the first loop that reaches it)."""
    seen = set()
    kept = []
    for diagnostic in diagnostics:
        site = (diagnostic.code, diagnostic.line, diagnostic.column, diagnostic.end_line, diagnostic.end_column)
        if site not in seen:
            seen.add(site)
            kept.append(diagnostic)
    return kept


def prefiltering() -> bool:
    """False when `$TORCHLINT_NO_PREFILTER` asks for every file to be parsed and analysed."""
    return not env_flag(_NO_PREFILTER_ENV)


def checks_syntax(text: str, walked: bool, path: str = "") -> bool:
    """Whether a syntax error in `text` is reported (TL000).

    Always for a file named on the command line, read from standard input or open in an editor. For a file
    found by walking a folder (`walked`), only when it may hold a training loop: those are the files
    torchlint parses anyway, so a walk over a big tree parses no other file (CPython's parser would take
    twice as long as the rest of a cold run of the torch package). A walked file whose only training is in
    another file it calls (`may_train`) is analysed when it parses, but its syntax is not judged: a template
    in the project's tree (cookiecutter's `{% if %}` around Python) is no broken program.
    """
    return not walked or may_hold_training_loop(text)


def skipped_unparsed(text: str, walked: bool = False, path: str = "") -> bool:
    """Whether `text` has no findings without parsing it: `# torchlint: noqa`, or it was found by walking a
    folder and cannot hold a training loop, of its own or through another file of the project (`may_train`;
    with `$TORCHLINT_NO_PREFILTER` it is parsed anyway, and the caller drops its TL000)."""
    return _file_noqa(text) or (prefiltering() and walked and not may_train(text, path))


def _file_noqa(text: str) -> bool:
    """`# torchlint: noqa` on a line of its own: the file is skipped."""
    return "torchlint" in text.lower() and bool(_FILE_NOQA.search(text))  # the regex alone is three times slower


def _syntax_checked(text: str) -> Union[Screened, Tuple[List[Diagnostic], List[Problem]]]:
    """A text that cannot hold a training loop, so only its syntax is in question: no findings when CPython
    parses it, else the whole text for LibCST to report (TL000). As for any file, the large data statements
    of a file over 1 MB are not parsed, and a file left with over 2 MB of code is not checked."""
    checked, kept = _without_large_data(text) if len(text) > LARGE_FILE_BYTES else (text, len(text))
    if kept > MAX_PARSE_BYTES or _python_tree(checked) is not None:
        return [], []
    return Screened(checked, checked, None)


def may_train(text: str, path: str = "") -> bool:
    """False when `text` cannot hold a training loop: no backward of its own (`may_hold_training_loop`), and,
    for the file `path` of a project, no call into a function or object of another file of the project that
    runs one (`torchlint.project.index.may_call_into_training`: `engine.py` calling the `loss_scaler` that
    `main.py` hands it, whose `__call__` in `util/misc.py` runs the backward)."""
    if may_hold_training_loop(text):
        return True
    if not path or not path.endswith(".py"):
        return False
    from torchlint.project.index import may_call_into_training

    try:
        return may_call_into_training(text, path)
    except (OSError, RecursionError):
        return False


def _project_entries(text: str, path: str, tree: ast.Module, imported: Dict[str, Set[str]],
                     matched: AbstractSet[str] = frozenset()
                     ) -> Tuple[Set[str], Optional[Callable[[ast.Call], bool]]]:
    """The names through which a loop of the file may call into a function or object of another file of the
    project that runs a backward (`torchlint.project.index.entry_names`), and, when there are some, a test of a
    call spelled with one of them: whether it may run such a function or method (`_may_run_carrier`).
    `imported`: what the file's imports bind (`_import_origins`); `matched`: those an import under a `match`
    statement binds."""
    if not path or not path.endswith(".py"):
        return set(), None
    from torchlint.project.index import ProjectIndex, carriers_in, entry_names, entry_words

    try:
        index = ProjectIndex.of(path)
        where = os.path.abspath(path)
        # and the file's own classes whose method runs a backward (`scaler = Scaler()` ... `scaler(loss, opt)`)
        own = carriers_in(text)[0]
        words = entry_words(text, where, index) | {name for name, _ in own}
        if not words:
            return set(), None
        names = entry_names(tree, text, where, words, index)
        # a call runs a backward only through a carrier that runs one on each call (not `train_one_epoch`, whose
        # backward is its own loop's): the carriers, and the file's own classes', that may
        functions, methods = index.running_carriers()
        methods = methods | {method for _, method in carriers_in(text, running=True)[0]}
        return names, functools.partial(_may_run_carrier, imported, functions, methods, matched)
    except (OSError, RecursionError):
        return set(), None


def _import_bound(statement: ast.stmt) -> Set[str]:
    """The names the imports anywhere in `statement` bind."""
    return {alias.asname or alias.name.split(".", 1)[0] for node in ast.walk(statement)
            if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}


def _import_origins(imports: Sequence[ast.stmt]) -> Dict[str, Set[str]]:
    """Each name the import statements `imports` bind -> the dotted names it may stand for, a relative import's
    with its leading dots (`import torch.nn as nn` -> `nn`: {`torch.nn`}; `from .engine import train_one_epoch
    as train` -> `train`: {`.engine.train_one_epoch`}; `import torch.nn` -> `torch`: {`torch`})."""
    found: Dict[str, Set[str]] = {}
    for node in imports:
        if isinstance(node, ast.Import):
            for alias in node.names:
                head = alias.name.split(".", 1)[0]
                found.setdefault(alias.asname or head, set()).add(alias.name if alias.asname else head)
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (f"{node.module}." if node.module else "")
            for alias in node.names:
                if alias.name != "*":
                    found.setdefault(alias.asname or alias.name, set()).add(module + alias.name)
    return found


def _may_run_carrier(imported: Dict[str, Set[str]], functions: FrozenSet[str], methods: FrozenSet[str],
                     matched: AbstractSet[str], call: ast.Call) -> bool:
    """Whether a call may run a function or method of the project that runs a backward, as
    `torchlint.training.calls.Functions.remote` finds one (a superset, from names alone): a dotted callee whose
    first name an import binds may run a function of that name among the project's carrier functions
    (`utils.train_step(...)`, `train_step(...)`, a renamed import); any callee may run a method so named of a
    carrier class (`scaler(...)` its `__call__`, `updater.backward_step(...)`), on an object other than `self`
    (`self.step(...)` is a method of the loop's own class, which the analysis of this file follows)."""
    func = call.func
    parts: List[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return False  # `get_scaler()(loss)`, `scalers[0](loss)`: no name to follow
    head = func.id
    origins = imported.get(head)
    if origins is not None:
        if parts[0] in functions if parts else any(origin.rsplit(".", 1)[-1] in functions for origin in origins):
            return True
        if head not in matched:
            return False  # an imported name leads to a function of another file, never to an object's method
    if head == "self" and len(parts) == 1:
        return False
    return (parts[0] if parts else "__call__") in methods  # (a name imported only where the analysis looks
    # for no import, a `match` case, is read as an object's)


def may_hold_training_loop(text: str) -> bool:
    """False when `text` cannot hold a training loop: no `backward(` or `grad(` call anywhere (nor a Lightning
    `accumulate_grad_batches`, where `training_step` returns the loss Lightning backpropagates, nor a call of
    the `training_step` a Hugging Face `Trainer` subclass inherits, `training.frameworks`)."""
    # Equivalent to `_PREFILTER.search(text)`, twenty times faster: literal searches first, and a
    # pattern that starts with a literal (the regex engine skips ahead to it).
    if "backward" in text and _BACKWARD_CALL.search(text):
        return True
    if "accumulate_grad_batches" in text:
        return True
    if "on_before_optimizer_step" in text and "zero_grad" in text:  # a Lightning hook before the step resets
        return True
    if "training_step(" in text and "transformers" in text:  # the Hugging Face `Trainer`'s, which backpropagates
        return True
    if "grad" in text:
        for match in _GRAD_CALL.finditer(text):
            start = match.start()
            if start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_"):
                return True
    return False


_BACKWARD_METHODS = frozenset({"backward", "manual_backward", "grad"})
# `backward`, then what may stand between a callee and its `(`: blanks, line continuations, comments. The text
# of every call of `backward` or `manual_backward` (or `_backward`: a superset) matches.
_BACKWARD_CALLED = re.compile(r"backward(?:\s|\\|#[^\n]*)*\(")
_LOOP_WORDS = re.compile(r"backward\b|\bgrad\b")
def _candidate_loops_in(text: str, path: str = "") -> bool:
    tree = _python_tree(text)
    return tree is None or bool(_gated_loops(tree, text, path)[0])


def _python_tree(text: str) -> Optional[ast.Module]:
    """CPython's syntax tree of `text` (several times faster to build than LibCST's); None if it rejects it.

    Warnings are silenced: an invalid escape such as `"\\d"` is valid Python, whatever `-W error` or
    `PYTHONWARNINGS` make of the warning, and is not torchlint's to print.
    """
    try:
        return _cpython_parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _cpython_parse(text: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile(text, "<torchlint>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)


def _gated_loops(tree: ast.Module, text: str, path: str = "") -> Tuple[List[ast.stmt], Optional[FrozenSet[str]]]:
    """(the `for`/`while` loops that contain a call that may be a backward, the names such a call is spelled with).

    The names: a loop none of whose calls is spelled with one of them (the callee's name or an attribute on the
    way to it) is none of those loops, and trains neither (`training.loop`'s `_trains` skips it without following
    its calls); None when every loop of the file is one.

    Files whose `backward(` or `grad(` calls all sit outside loops (or are
    definitions, comments, strings) are never handed to LibCST. The test is a
    superset of the loops `torchlint.training` analyses: any call of a name or
    attribute `backward`, `manual_backward` or `grad`, or of a name imported
    under another name from `... import backward` or `grad`. Text CPython
    rejects is not tested: it goes on to LibCST, which reports it (TL000).

    Only statements are walked; a loop whose lines do not even contain one of
    those words is passed over without walking its expressions.

    A loop of a file of a project may also run a backward through a call into
    another file (`torchlint.training.calls.Functions.remote`): a loop that
    calls one of the names `_project_entries` gives is kept too.
    """
    from torchlint.sparse import inner_statements

    loops: List[ast.stmt] = []
    functions: List[ast.stmt] = []
    names = {"backward", "grad"}
    imports: List[ast.stmt] = []
    classes: List[ast.ClassDef] = []
    matched: Set[str] = set()  # the names an import under a `match` statement binds
    pending: List[ast.stmt] = list(tree.body)
    while pending:
        statement = pending.pop()
        if isinstance(statement, (ast.For, ast.AsyncFor, ast.While)):
            loops.append(statement)
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.append(statement)
        elif isinstance(statement, ast.ImportFrom):
            names.update(alias.asname for alias in statement.names if alias.asname and alias.name in ("backward", "grad"))
            imports.append(statement)
        elif isinstance(statement, ast.Import):
            imports.append(statement)
        elif isinstance(statement, ast.ClassDef):
            classes.append(statement)
        elif isinstance(statement, ast.Match):
            matched.update(_import_bound(statement))
        pending.extend(inner_statements(statement))
    updates = _update_functions(functions, names, text)
    if not loops:
        return updates, None
    methods = _BACKWARD_METHODS
    imported = _import_origins(imports)
    if "training_step(" in text and "transformers" in text and _subclasses_transformers(classes, imported):
        # the Hugging Face `Trainer`'s, inherited, backpropagates
        methods, names = methods | {"training_step"}, names | {"training_step"}
    words = _LOOP_WORDS if len(names) == 2 else re.compile(
        r"backward\b|\b(?:" + "|".join(sorted(map(re.escape, names))) + r")\b")
    lines = text.split("\n") if "\r" not in text else [line.rstrip("\r\n") for line in split_lines(text)]
    found = [loop for loop in loops if words.search("\n".join(lines[loop.lineno - 1:loop.end_lineno]))
             and any(_may_be_backward(node, names, methods) for node in calls(loop))]
    helpers = _backward_helpers(functions, names, lines) if len(found) < len(loops) else set()
    if helpers:  # a loop that calls a function of the file that runs a backward (`training.calls`)
        chosen = {id(loop) for loop in found}
        found += [loop for loop in loops if id(loop) not in chosen and _spells_one_of(lines, loop, helpers) and any(
            _called_name(node) in helpers for node in calls(loop))]
    entries, runs = _project_entries(text, path, tree, imported, matched) if len(found) < len(loops) \
        else (set(), None)
    if runs is not None:  # a loop that calls into another file of the project that runs a backward
        chosen = {id(loop) for loop in found}
        found += [loop for loop in loops if id(loop) not in chosen and _spells_one_of(lines, loop, entries) and any(
            not _callee_parts(node.func).isdisjoint(entries) and runs(node) for node in calls(loop))]
    trainers = None if len(found) == len(loops) else frozenset(names | methods | helpers | entries)
    return found + updates, trainers


def _subclasses_transformers(classes: List[ast.ClassDef], imported: Dict[str, Set[str]]) -> bool:
    """Whether a class of the file may subclass a class imported from `transformers` (its base a name, or an
    attribute of a name, that an import of the file binds to something of that package, `_import_origins`):
    only such a class inherits the Hugging Face `Trainer`'s `training_step` (`training.calls.Functions._inherited`).
    A copy of the `Trainer`'s own code, whose loop calls the `training_step` it defines, is no such class (a
    superset: the analysis resolves the base through the file's imports, `torchlint.names.ModuleNames.qualify`)."""
    bound = {name for name, origins in imported.items()
             if any(origin.split(".", 1)[0] == "transformers" for origin in origins)}
    if not bound:
        return False
    for class_def in classes:
        for base in class_def.bases:
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in bound:
                return True
    return False


def _spells_one_of(lines: List[str], statement: ast.stmt, names: Set[str]) -> bool:
    """Whether the lines of `statement` may hold one of `names` (as part of a word, even): a call of a name or of
    an attribute so named is written there, so a statement whose text has none of them is not walked. Text with
    other than ASCII always may: Python reads `ｓtep` as `step`."""
    text = "\n".join(lines[statement.lineno - 1:statement.end_lineno])
    return not text.isascii() or any(name in text for name in names)


def _callee_parts(func: ast.expr) -> Set[str]:
    """`{"self", "scaler"}` for `self.scaler(...)`: the names a callee is spelled with."""
    parts: Set[str] = set()
    while isinstance(func, ast.Attribute):
        parts.add(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.add(func.id)
    return parts


def _update_functions(functions: List[ast.stmt], names: set, text: str) -> List[ast.stmt]:
    """Functions a framework calls once per iteration that run a backward (`training.loop.update_functions`):
    Ignite's `Engine(update_fn)`, Lightning's `training_step` under manual optimisation; and, in a file that
    sets `accumulate_grad_batches`, Lightning's `training_step`, whose returned loss TL013 reads."""
    automatic = "accumulate_grad_batches" in text  # TL013 reads what `training_step` returns to Lightning
    brain = "fit_batch" in text and "Brain" in text  # SpeechBrain's `fit_batch` (`training.loop.speechbrain_brain`)
    # Lightning's hooks between the backward and the step (`training.frameworks.hook_resets`)
    hooks = "zero_grad" in text and ("on_after_backward" in text or "on_before_optimizer_step" in text)
    if "Engine(" not in text and "automatic_optimization" not in text and not automatic and not brain and not hooks:
        return []
    found = []
    for function in functions:
        name = function.name
        if automatic and name == "training_step":
            found.append(function)
            continue
        if hooks and name in ("on_after_backward", "on_before_optimizer_step"):
            found.append(function)
            continue
        handed = re.search(r"Engine\(\s*(?:process_function\s*=\s*)?" + re.escape(name) + r"\b", text)
        manual = (name == "training_step" and "automatic_optimization" in text) or (brain and name == "fit_batch")
        if (handed or manual) and any(_may_be_backward(node, names) for node in calls(function)):
            found.append(function)
    return found


def _called_name(call: ast.Call) -> Optional[str]:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _backward_helpers(functions: List[ast.stmt], names: set, lines: List[str]) -> set:
    """Names of the file's functions that may run a backward (not `autograd.grad`: a loop that asks for
    gradients is not a training loop) on every call (`_calls_on_every_call`), or call such a function there
    (two deep); and of the methods a loop may run as its body (`torchlint.training.loop.windowed_methods`: a
    backward anywhere in them and a step under an `if`, `_steps_under_if`). Only functions whose text has the
    word are walked."""
    texts = {id(function): "\n".join(lines[function.lineno - 1:function.end_lineno]) for function in functions}
    backward = names - {"grad"}
    def spelled(text: str) -> bool:
        if backward == {"backward"} and text.isascii():
            return _BACKWARD_CALLED.search(text) is not None
        return "backward" in text

    def backpropagates(found: List[ast.Call]) -> bool:
        return any(_may_be_backward(node, backward) and _called_name(node) != "grad" for node in found)

    spelling = [function for function in functions if spelled(texts[id(function)])]
    helpers = {function.name for function in spelling
               if backpropagates(_calls_on_every_call(function, texts[id(function)]))}
    helpers |= {function.name for function in spelling if function.name not in helpers
                and not function.name.startswith("__") and not function.decorator_list
                and _steps_under_if(function) and backpropagates(calls(function))}
    if helpers:
        called = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, helpers))) + r")\s*\(")
        helpers |= {function.name for function in functions if called.search(texts[id(function)])
                    and any(_called_name(node) in helpers
                            for node in _calls_on_every_call(function, texts[id(function)]))}
    return helpers


def _steps_under_if(function: ast.stmt) -> bool:
    """A `.step()` call in an `if` of the function's own body, through `with` and `try` (a superset of
    `torchlint.training.loop._steps_under_if`, which reads the first such `if` only)."""
    pending: List[ast.stmt] = list(function.body)
    while pending:
        statement = pending.pop()
        kind = type(statement)
        if kind is ast.If:
            if any(isinstance(call.func, ast.Attribute) and call.func.attr == "step" for call in calls(statement)):
                return True
        elif kind is ast.With or kind is ast.AsyncWith or kind in _TRIES:
            pending.extend(statement.body)
    return False


def _calls_on_every_call(function: ast.stmt, text: Optional[str] = None) -> List[ast.Call]:
    """The calls a function may run on a call that runs its whole body, as `torchlint.training.calls.Functions.runs`
    reads them (a superset: whether a parameter is rebound is not asked): those of its statements outside
    loops, nested functions and classes, `except` handlers and `match` cases, through `with` and `try`, and
    those under an `if` that tests one of its parameters (`if update_grad:`, its `else`); none when it may return
    before its last statement, yield or await. A function whose only backward is in a loop of its own, under a
    test of something else, or after an early `return`, runs none on every call: a loop calling it is no
    training loop of its own.

    `text`: the function's lines, if known: where they spell neither `yield` nor `await`, its statements alone
    are walked for a `return` (an expression holds none), not its expressions."""
    from torchlint.sparse import inner_statements

    body = function.body
    last = body[-1].lineno if body else 0
    expressions = text is None or "yield" in text or "await" in text
    pending: List[ast.AST] = list(body)
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind in _OWN_SCOPES:
            continue
        if kind is ast.Yield or kind is ast.YieldFrom or kind is ast.Await:
            return []
        if kind is ast.Return and node.lineno < last:
            return []
        if expressions:
            pending.extend(ast.iter_child_nodes(node))
        else:
            pending.extend(inner_statements(node))
    arguments = function.args
    parameters = {argument.arg for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    parameters.discard("self")
    found: List[ast.Call] = []
    pending_blocks: List[Tuple[List[ast.stmt], bool]] = [(body, True)]
    while pending_blocks:
        statements, tests = pending_blocks.pop()  # `tests`: an `if` on a parameter counts here
        for statement in statements:
            kind = type(statement)
            if kind is ast.If:
                if tests and _tests_parameter(statement.test, parameters):
                    # its `else` too; an `elif` (an `if` alone in `orelse`) is passed over there
                    pending_blocks += [(statement.body, False), (statement.orelse, False)]
            elif kind is ast.With or kind is ast.AsyncWith:
                pending_blocks.append((statement.body, tests))
            elif kind in _TRIES:
                pending_blocks += [(statement.body, tests), (statement.finalbody, tests)]
            elif kind not in _NOT_EVERY_CALL:
                found += calls(statement)
    return found


def _tests_parameter(test: ast.expr, parameters: Set[str]) -> bool:
    """`update_grad`, `not update_grad`: a test of one of `parameters`."""
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    return isinstance(test, ast.Name) and test.id in parameters


_OWN_SCOPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda})
_TRIES = frozenset({ast.Try} | ({ast.TryStar} if hasattr(ast, "TryStar") else set()))
_NOT_EVERY_CALL = frozenset({ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef}
                            | ({ast.Match} if hasattr(ast, "Match") else set()))


def _may_be_backward(node: ast.AST, names: set, methods: FrozenSet[str] = _BACKWARD_METHODS) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr in methods) or (
        isinstance(func, ast.Name) and func.id in names)


def _statement_lines(tree: ast.Module) -> List[int]:
    """The first line of each module-level statement as LibCST groups them (`a; b` is one), decorators included."""
    from torchlint.sparse import first_line

    return sorted({first_line(statement) for statement in tree.body})


def _without_large_data(text: str) -> Tuple[str, int]:
    """`text` with its large top-level statements that cannot hold a training loop blanked, and the size kept.

    Blanked lines keep their line breaks, so every line and column of what is kept stays where it was.
    A text the tokenizer rejects is returned whole (the parser will report it).
    """
    if "\r" in text.replace("\r\n", ""):  # lone CR line breaks: the tokenizer's rows would not be ours
        return text, len(text)
    starts: List[int] = []  # first line of each top-level statement (1-based)
    level, line_start, decorated = 0, True, False
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            kind = token.type
            if kind == tokenize.INDENT:
                level += 1
            elif kind == tokenize.DEDENT:
                level -= 1
            elif kind == tokenize.NEWLINE:
                line_start = True
            elif kind not in (tokenize.NL, tokenize.COMMENT, tokenize.ENDMARKER):
                if line_start and level == 0:
                    # `else:`/`except:`/`finally:` continue the statement above; decorators start their def.
                    continues = kind == tokenize.NAME and token.string in ("else", "elif", "except", "finally")
                    if not (continues or decorated):
                        starts.append(token.start[0])
                    decorated = kind == tokenize.OP and token.string == "@"
                line_start = False
    except (tokenize.TokenError, SyntaxError):
        return text, len(text)
    lines = split_lines(text)
    bounds = [start - 1 for start in starts] + [len(lines)]
    pieces, kept = [], 0
    for begin, end in zip(bounds, bounds[1:]):
        chunk = "".join(lines[begin:end])
        if len(chunk) > LARGE_STATEMENT_BYTES and not _PREFILTER.search(chunk):
            chunk = "".join(line[len(line.rstrip("\r\n")):] for line in lines[begin:end])
        else:
            kept += len(chunk)
        pieces.append(chunk)
    prefix = "".join(lines[: bounds[0]])
    return prefix + "".join(pieces), kept + len(prefix)


def _python_syntax_error(text: str) -> Optional[Tuple[str, int, int]]:
    """CPython's own message and position, the ones people know from running the file."""
    try:
        _cpython_parse(text)
    except SyntaxError as error:
        return f"SyntaxError: {error.msg}", max(error.lineno or 1, 1), max(error.offset or 1, 1)
    except (ValueError, RecursionError, MemoryError):
        return None
    return None


def _suppressed(diagnostic: Diagnostic, lines: List[str]) -> bool:
    if diagnostic.line > len(lines):
        return False
    match = _NOQA.search(lines[diagnostic.line - 1])
    if match is None:
        return False
    codes = match.group("codes")
    if not codes:
        return True
    wanted = {code.strip().upper() for code in codes.split(",")}
    return diagnostic.code.upper() in wanted or diagnostic.name.upper() in wanted


@dataclass(frozen=True)
class Program:
    """The Python program the rules read from one file, and how to map it back.

    For a `.py` file that is its text; for a notebook, its code cells joined
    (magics masked, cells that are not Python or do not parse left out), with
    findings mapped back to cells and fixes written back into them.
    """

    text: str
    notebook: Optional[object] = None  # torchlint.notebook.Notebook
    # TL000 of each notebook cell that does not parse on its own (in the cell's lines): not findings on
    # `text`, which leaves those cells out, so they are added to the findings on the file by `to_file`.
    cell_syntax_errors: Tuple[Diagnostic, ...] = ()

    def to_file(self, diagnostics: Sequence[Diagnostic]) -> List[Diagnostic]:
        if self.notebook is None:
            return list(diagnostics)
        from torchlint.notebook import map_diagnostic

        mapped = [map_diagnostic(self.notebook, d) for d in diagnostics] + list(self.cell_syntax_errors)
        return sorted(mapped, key=lambda d: (d.cell or 0, d.line, d.column, d.code))

    def frame_sources(self, path: str) -> dict:
        """The texts code frames quote, keyed like `report.concise.source_key`."""
        if self.notebook is None:
            return {path: self.text}
        return {f"{path}#cell{cell.number}": cell.text for cell in self.notebook.cells}

    def file_text(self, fixed_program: str) -> str:
        """The file's new text once the program is fixed (raises NotebookError if it cannot be)."""
        if self.notebook is None:
            return fixed_program
        from torchlint.notebook import write_back

        return write_back(self.notebook, fixed_program)


def load_program(path: Path, source: SourceText, walked: bool = False) -> Optional[Program]:
    """The program in a file; None for a notebook with nothing to analyse: of another language (R, Julia...),
    or found in a folder (`walked`) with neither a cell whose syntax is checked nor one that may train.

    A notebook cell that does not parse on its own is left out of the program and gets its own TL000
    (`Program.cell_syntax_errors`), so it hides nothing in the other cells. Cells are checked when the
    notebook's syntax is (`checks_syntax`: for a notebook found in a folder, only if it may hold a
    training loop; else the program is not parsed at all).
    """
    if path.suffix != ".ipynb":
        return Program(source.text)
    checked = checks_syntax(source.text, walked)
    if not checked and prefiltering() and not _notebook_may_train(source.text, str(path)):
        return None  # nothing to report: no cell is checked for syntax, and no cell can train
    return notebook_program(source.text, str(path), cell_syntax_error if checked else None)


def _notebook_may_train(text: str, path: str) -> bool:
    """Whether the program of the notebook JSON `text` may hold a training loop (`may_hold_training_loop`),
    judged on its code cells as they are (`torchlint.notebook.code_text`), without building the program:
    masking magics and taking out cells only leave words out. UnreadableFile when `text` is not a notebook.

    Most notebooks found in a folder train nothing, and building their program (each line scanned for
    IPython's syntax, each cell's place found in the JSON) took most of the time spent on them."""
    from torchlint.notebook import NotebookError, code_text

    try:
        return may_hold_training_loop(code_text(text))
    except NotebookError as error:
        raise UnreadableFile(f"{path}: {error}") from None


def notebook_program(text: str, path: str,
                     check: Optional[Callable[[str], Optional[Tuple[str, int, int]]]] = None) -> Optional[Program]:
    """The program of a notebook's JSON `text` (`load_program`); None for a notebook of another language.

    `check`: `cell_syntax_error`, or one that remembers its answers (the language server's); None: cells are
    not checked one by one. UnreadableFile when `text` is not a notebook.
    """
    from torchlint.notebook import NotebookError, read_notebook

    try:
        notebook = read_notebook(text, check)
    except NotebookError as error:
        raise UnreadableFile(f"{path}: {error}") from None
    if not notebook.is_python:
        return None
    from torchlint.registry import SYNTAX_ERROR

    code, name = SYNTAX_ERROR
    errors = tuple(
        Diagnostic(code, name, ERROR, message, path, line, column, line, column + 1, cell=cell.number)
        for cell in notebook.cells if cell.syntax_error is not None
        for message, line, column in (cell.syntax_error,) if message is not None
    )
    return Program(notebook.source, notebook, errors)


def cell_syntax_error(text: str) -> Optional[Tuple[Optional[str], int, int]]:
    """None when the code of one notebook cell parses, else its syntax error as TL000 reports it (`analyse`).

    CPython's parser answers first (top-level `await` is accepted, as IPython runs it); what it rejects is
    decided by LibCST, the parser every rule reads (newer syntax than the running Python's). A cell Python runs
    but LibCST cannot read (its tokenizer rejects some mixes of tabs and spaces in indentation that CPython
    accepts) is no syntax error: `(None, line, column)` leaves it out of the program without a TL000, so the
    other cells are still read.
    """
    import libcst as cst

    if _python_tree(text) is not None:
        if "\t" not in text:
            return None
        try:
            cst.parse_module(text)
        except cst.ParserSyntaxError as error:
            return None, max(error.raw_line, 1), error.raw_column + 1
        except (RecursionError, MemoryError):
            return None
        return None

    try:
        cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        return _python_syntax_error(text) or (
            f"SyntaxError: {error.message}", max(error.raw_line, 1), error.raw_column + 1)
    except (RecursionError, MemoryError):
        return None  # the whole program meets the same limit: `analyse` reports it
    return None
