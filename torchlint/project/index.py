"""The project's files indexed cheaply: who runs a backward, who calls whom, and with what.

A training step often leaves the file of its loop: `engine.py`'s `train_one_epoch(..., loss_scaler)`
calls `loss_scaler(loss, optimizer, update_grad=...)`, whose `__call__` in `util/misc.py` runs the backward
and the step, and the scaler is built in `main.py`, which hands it to `train_one_epoch`. What the loop's
facts need to know of the other files is small, and is read here with the standard library only:

- the project's root (the repository's: the folder holding `.git`, a few levels up at most; else the
  folder above the package the file is in) and its Python files;
- the *carriers*: the top-level functions and classes whose body runs a backward (a call spelled
  `backward(`), found in the text of the files that spell one (and the functions of such a file that
  call one of its carrier functions), with no parse: a cheap superset that decides only whether a file
  without a backward of its own is worth analysing (`may_call_into_training`);
- a summary of a file, from CPython's `ast` (`FileSummary`): its imports, what each name is bound to in
  each scope, the calls it makes and what they pass, its functions and classes. The callers of a function
  (`callers`) are read from the summaries of the files that spell its name and its module's.

Files are read once per process and content (path, size, modification time); a root's list of files is
kept for a minute, so a long-lived process (the language server) sees new files within a minute.

A long-lived process can say that a file's text is not the disk's (`set_open_text`: the unsaved text of a
document open in the editor) and that a file changed (`file_changed`: on disk, or its open text): every
read here, and the parsed modules of `torchlint.project.files`, then take the open text in place of the
disk's, and the indexes made so far are brought up to date for that one file (no new listing, no other file
read again). Call both from the thread that lints: the indexes are not locked.
Nothing here imports LibCST: the engine's prefilter asks it before deciding to parse anything.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import itertools
import os
import pickle
import re
import stat
import time
import warnings
from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from torchlint.collector import collector_paused
from torchlint.project.imports import Lookup, module_file
from torchlint.pywalk import nodes as all_nodes
from torchlint.text import lines_spelling
from torchlint.wrappers import SAME_MODULE_METHODS

# How many folders above a file its repository's root (`.git`) is looked for.
_ROOT_LEVELS = 6
# A project with more Python files than this is not indexed whole: callers found in it are not all of them.
_MAX_FILES = 4000
# Files bigger than this are not read (a vendored library, generated code).
_MAX_BYTES = 1_000_000
# How long a root's list of files is trusted, in seconds.
_LISTING_SECONDS = 60.0
_SKIPPED_FOLDERS = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", "build", "dist", "node_modules", "__pycache__", "site-packages",
     ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".torchlint_cache", ".eggs"})

_BACKWARD = re.compile(r"backward\s*\(")
# Methods whose call a loop counts as a backward by its name (`training.roles.classify_backward`).
_BACKWARD_NAMES = frozenset({"backward", "manual_backward"})
_DEFINES = re.compile(r"[ \t]*(?:async[ \t]+)?def\b")
_TRIPLE_QUOTED = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'')
_WORD = re.compile(r"\w+")
_CALLED = re.compile(r"(\w+)\s*\(")


def project_root(path: str) -> str:
    """The folder a file's project starts at: its repository's root, else the folder above its package."""
    return _root_of(os.path.dirname(os.path.abspath(path)))


@functools.lru_cache(maxsize=4096)  # asked for the folder of every file a walk finds
def _root_of(folder: str) -> str:
    base = folder
    for _ in range(_ROOT_LEVELS):
        if os.path.exists(os.path.join(base, ".git")):
            return base
        parent = os.path.dirname(base)
        if parent == base:
            break
        base = parent
    base = folder
    while os.path.isfile(os.path.join(base, "__init__.py")) and os.path.dirname(base) != base:
        base = os.path.dirname(base)
    return base


# --- what one file says ------------------------------------------------------------------------


@dataclass(frozen=True)
class Argument:
    """What a call passes: a name (`loss_scaler`), or an object built right there (`NativeScaler()`)."""

    name: Optional[str] = None  # the dotted name passed
    built: Optional[str] = None  # the dotted callee of a call passed as it is
    literal: Optional[str] = None  # a constant passed, as `repr` writes it (`1`, `'train'`)


@dataclass(frozen=True)
class CallSummary:
    callee: str  # as written: `train_one_epoch`, `engine.train_one_epoch`
    line: int
    scope: str  # the function it is in (`main`, `Trainer.fit`), "" at module level
    positional: Tuple[Argument, ...]
    keywords: Tuple[Tuple[str, Argument], ...]
    open_ended: bool  # `*args` before the end or `**kwargs`: what is passed where is unknown
    guards: Tuple[str, ...] = ()  # the branches around the call in its scope (`BindingSite.guards`)


@dataclass(frozen=True)
class FunctionSummary:
    line: int
    positional: Tuple[str, ...]  # parameters that take positional arguments, `self` included
    keyword_only: Tuple[str, ...]
    defaults: Tuple[Tuple[str, str], ...] = ()  # parameter -> its default, when a constant (as `repr` writes it)


# What `FileSummary.bindings` holds for a name bound to `None` (`loss_scaler = None` when DeepSpeed scales): no
# object, so no class whose methods a call of it could run.
NOTHING = "<None>"


@dataclass(frozen=True)
class BindingSite:
    """Where a name is given one of its values (`FileSummary.bindings`), and under which branches."""

    value: Optional[str]  # the dotted callee of the value, as in `bindings`
    line: int
    # The branches around the binding in its scope, outermost first: where an `if`'s test is written
    # (`line:column:end_line:end_column`) for its body, `!` before it for its `else` (`guard_text` reads them);
    # `<loop>` inside a `for`/`while` body, `<except>` in a handler.
    guards: Tuple[str, ...]


def guard_text(text: str, guard: str) -> str:
    """A branch of `BindingSite.guards` as the file `text` writes its test: `args.distributed`, `not (a > 1)`."""
    negated = guard.startswith("!")
    line, column, end_line, end_column = (int(part) for part in guard.lstrip("!").split(":"))
    lines = text.splitlines(keepends=True)
    if end_line == line:
        written = lines[line - 1].encode()[column:end_column].decode(errors="replace")
    else:
        parts = [lines[line - 1].encode()[column:].decode(errors="replace"), *lines[line:end_line - 1],
                 lines[end_line - 1].encode()[:end_column].decode(errors="replace")]
        written = " ".join(part.strip() for part in parts)
    return f"not ({written})" if negated else written


@dataclass(frozen=True)
class FileSummary:
    """What one file defines, imports, binds and calls, read with `ast`."""

    imports: Dict[str, Tuple[int, str]]  # local name -> (level, dotted): `NativeScaler` -> (0, `util.misc.Native...`)
    # (scope, name) -> the dotted callee of each value it is given there, `NOTHING` for `None`, None for a value
    # that is not a call of a name (a parameter, a loop target, another literal...)
    bindings: Dict[Tuple[str, str], Tuple[Optional[str], ...]]
    calls: Tuple[CallSummary, ...]
    functions: Dict[str, FunctionSummary]  # top-level functions
    classes: Dict[str, Dict[str, FunctionSummary]]  # top-level classes -> their methods
    parents: Dict[str, str]  # scope -> the scope it is nested in
    sites: Dict[Tuple[str, str], Tuple[BindingSite, ...]] = None  # (scope, name) -> each binding, in order

    def sites_of(self, scope: str, name: str) -> Tuple[BindingSite, ...]:
        """The bindings of `name` read in `scope`, with their lines and branches, in the innermost scope that binds
        it (see `values_of`)."""
        while True:
            found = (self.sites or {}).get((scope, name))
            if found is not None:
                return found
            if not scope:
                return ()
            scope = self.parents.get(scope, "")

    def sites_at(self, call: CallSummary, name: str) -> Tuple[BindingSite, ...]:
        """The bindings of `name` that may give it its value where `call` reads it: those of `sites_of`, less
        those made in the call's own scope at or after its line when no loop there holds the call (they run
        after it: `model = Model.from_pretrained(out)` to evaluate, after `train(model)`). A binding of an
        enclosing scope may run first whatever its line (a module's `model = ...` below `def main()`)."""
        own = (self.sites or {}).get((call.scope, name))
        if own is None or "<loop>" in call.guards:
            return self.sites_of(call.scope, name)
        return tuple(site for site in own if site.line < call.line)

    def values_at(self, call: CallSummary, name: str) -> Tuple[Optional[str], ...]:
        """What `name` may hold where `call` reads it (see `sites_at`)."""
        if self.sites is None:
            return self.values_of(call.scope, name)
        return tuple(site.value for site in self.sites_at(call, name))

    def objects_at(self, call: CallSummary, name: str) -> Tuple[Optional[str], ...]:
        """`values_at` less `None`: a path that passes `None` passes no object, so where the loop calls what it
        was handed, it holds what the other paths give."""
        return tuple(value for value in self.values_at(call, name) if value != NOTHING)

    def values_of(self, scope: str, name: str) -> Tuple[Optional[str], ...]:
        """What `name` read in `scope` may hold: its bindings in the innermost scope that binds it."""
        while True:
            found = self.bindings.get((scope, name))
            if found is not None:
                return found
            if not scope:
                return ()
            scope = self.parents.get(scope, "")


def summarize(text: str) -> Optional[FileSummary]:
    """The summary of a file's text; None when CPython does not parse it."""
    with collector_paused():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        return _Summarizer(tree).summary


class _Summarizer:
    def __init__(self, tree: ast.Module) -> None:
        self.imports: Dict[str, Tuple[int, str]] = {}
        self.bindings: Dict[Tuple[str, str], List[Optional[str]]] = {}
        self.calls: List[CallSummary] = []
        self.functions: Dict[str, FunctionSummary] = {}
        self.classes: Dict[str, Dict[str, FunctionSummary]] = {}
        self.parents: Dict[str, str] = {}
        self.sites: Dict[Tuple[str, str], List[BindingSite]] = {}
        self._guards: List[str] = []  # the branches around the statement being read, in its scope
        self._line = 0
        self._block(tree.body, "", None, top=True)
        self.summary = FileSummary(self.imports, {key: tuple(values) for key, values in self.bindings.items()},
                                   tuple(self.calls), self.functions, self.classes, self.parents,
                                   {key: tuple(values) for key, values in self.sites.items()})

    def _bind(self, scope: str, target: ast.AST, value: Optional[str]) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._bind(scope, element, None)
            return
        if isinstance(target, ast.Starred):
            self._bind(scope, target.value, None)
            return
        name = _dotted(target)
        if name is not None:
            self.bindings.setdefault((scope, name), []).append(value)
            line = getattr(target, "lineno", self._line)
            self.sites.setdefault((scope, name), []).append(BindingSite(value, line, tuple(self._guards)))

    def _function(self, node, scope: str, class_name: Optional[str], top: bool) -> None:
        arguments = node.args
        positional = tuple(a.arg for a in (*arguments.posonlyargs, *arguments.args))
        keyword_only = tuple(a.arg for a in arguments.kwonlyargs)
        tail = positional[len(positional) - len(arguments.defaults):] if arguments.defaults else ()
        pairs = [*zip(tail, arguments.defaults), *zip(keyword_only, arguments.kw_defaults)]
        defaults = tuple((name, repr(default.value)) for name, default in pairs
                         if isinstance(default, ast.Constant))
        summary = FunctionSummary(node.lineno, positional, keyword_only, defaults)
        if class_name is not None and top:
            self.classes[class_name][node.name] = summary
        elif top:
            self.functions[node.name] = summary
        inner = f"{scope}.{node.name}" if scope else (f"{class_name}.{node.name}" if class_name else node.name)
        self.parents[inner] = scope
        every = (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                 *(a for a in (arguments.vararg, arguments.kwarg) if a is not None))
        for parameter in every:
            self.bindings.setdefault((inner, parameter.arg), []).append(None)
        for default in (*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)):
            self._expression(default, scope)
        outer, self._guards = self._guards, []  # a function's body starts on no branch of its own
        self._block(node.body, inner, None, top=False)
        self._guards = outer

    def _block(self, statements: Iterable[ast.stmt], scope: str, class_name: Optional[str], top: bool) -> None:
        for statement in statements:
            self._line = statement.lineno
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._bind(scope, ast.Name(statement.name), None)
                self._function(statement, scope, class_name, top)
                continue
            if isinstance(statement, ast.ClassDef):
                self._bind(scope, ast.Name(statement.name), None)
                if top and class_name is None and not scope:
                    self.classes.setdefault(statement.name, {})
                    self._block(statement.body, scope, statement.name, top=True)
                else:
                    self._block(statement.body, scope, None, top=False)
                continue
            if isinstance(statement, ast.Import):
                for alias in statement.names:
                    if scope or class_name:
                        continue
                    if alias.asname:
                        self.imports[alias.asname] = (0, alias.name)
                    else:
                        head = alias.name.split(".")[0]
                        self.imports[head] = (0, head)
                continue
            if isinstance(statement, ast.ImportFrom):
                if scope or class_name:
                    continue
                for alias in statement.names:
                    if alias.name == "*":
                        continue
                    origin = f"{statement.module}.{alias.name}" if statement.module else alias.name
                    self.imports[alias.asname or alias.name] = (statement.level, origin)
                continue
            if isinstance(statement, ast.Assign):
                value = _built(statement.value)
                for target in statement.targets:
                    self._bind(scope, target, value)
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
                self._bind(scope, statement.target, _built(statement.value))
            elif isinstance(statement, (ast.AugAssign, ast.For, ast.AsyncFor)):
                self._bind(scope, statement.target, None)
            elif isinstance(statement, (ast.With, ast.AsyncWith)):
                for item in statement.items:
                    if item.optional_vars is not None:
                        self._bind(scope, item.optional_vars, None)
            self._expressions(statement, scope)
            for block in ("body", "orelse", "finalbody"):
                inner = getattr(statement, block, None)
                if inner and isinstance(inner, list) and isinstance(inner[0], ast.stmt):
                    self._guards.append(_branch(statement, block))
                    self._block(inner, scope, class_name, top=False if class_name is None else top)
                    self._guards.pop()
            for part in getattr(statement, "handlers", ()) or getattr(statement, "cases", ()):
                if getattr(part, "name", None):
                    self._bind(scope, ast.Name(part.name), None)
                self._guards.append("<except>" if isinstance(part, ast.ExceptHandler) else "<case>")
                self._block(part.body, scope, class_name, top=False)
                self._guards.pop()

    def _expressions(self, statement: ast.stmt, scope: str) -> None:
        """The calls in a statement's own expressions (not in the blocks it holds)."""
        for field, value in ast.iter_fields(statement):
            if field in ("body", "orelse", "finalbody", "handlers", "cases"):
                continue
            for part in value if isinstance(value, list) else [value]:
                if isinstance(part, ast.AST):
                    self._expression(part, scope)

    def _expression(self, node: ast.AST, scope: str) -> None:
        for part in all_nodes(node):
            if isinstance(part, ast.NamedExpr):
                self._bind(scope, part.target, _built(part.value))
            if not isinstance(part, ast.Call):
                continue
            callee = _dotted(part.func)
            if callee is None:
                continue
            positional: List[Argument] = []
            open_ended = False
            for argument in part.args:
                if isinstance(argument, ast.Starred):
                    open_ended = True
                    break
                positional.append(_argument(argument))
            keywords = []
            for keyword in part.keywords:
                if keyword.arg is None:
                    open_ended = True
                else:
                    keywords.append((keyword.arg, _argument(keyword.value)))
            self.calls.append(CallSummary(callee, part.lineno, scope, tuple(positional), tuple(keywords), open_ended,
                                          tuple(self._guards)))


def _branch(statement: ast.stmt, block: str) -> str:
    """How a block of a compound statement is reached (`BindingSite.guards`); "" for a block every path through
    the statement runs (a `with` body, a `try` body and its `finally`)."""
    if isinstance(statement, ast.If):  # where its test is written (`guard_text` reads it): cheaper than unparsing
        test = statement.test
        where = f"{test.lineno}:{test.col_offset}:{test.end_lineno}:{test.end_col_offset}"
        return where if block == "body" else f"!{where}"
    if isinstance(statement, (ast.For, ast.AsyncFor, ast.While)):
        return "<loop>"
    if isinstance(statement, ast.Try) and block == "orelse":
        return "<else>"
    return ""


def _dotted(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base is not None else None
    return None


def _built(value: ast.AST) -> Optional[str]:
    """The dotted callee of `Name(...)`, the value a binding holds when it is built by a call; `NOTHING` for
    `None`; else None. A module moved as it is built is the one built: `Net(...).to(device)`, `Net(...).cuda()`
    give `Net`."""
    if isinstance(value, ast.Constant) and value.value is None:
        return NOTHING
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
            and value.func.attr in SAME_MODULE_METHODS and isinstance(value.func.value, ast.Call):
        value = value.func.value
    return _dotted(value.func) if isinstance(value, ast.Call) else None


def _argument(value: ast.AST) -> Argument:
    if isinstance(value, ast.Call):
        return Argument(built=_dotted(value.func))
    if isinstance(value, ast.Constant):
        return Argument(literal=repr(value.value))
    return Argument(name=_dotted(value))


# --- files, read once per content ----------------------------------------------------------------


# Open texts that stand for the disk's: path -> (generation, text). A generation is never reused, and an open
# text's stamp is (its length, -generation): the caches below, keyed by stamp, never mix it with a disk read.
_OPEN_TEXTS: Dict[str, Tuple[int, str]] = {}
_generations = itertools.count(1)


def _open_keys(path: str) -> Tuple[str, ...]:
    absolute = os.path.abspath(path)
    real = os.path.realpath(absolute)
    return (absolute,) if real == absolute else (absolute, real)


def set_open_text(path: str, text: Optional[str]) -> bool:
    """Read `text` in place of the file `path` from now on (None: read the disk again); True when what is read
    of it changes. Indexes learn of the change through `file_changed`."""
    changed = False
    for key in _open_keys(path):
        held = _OPEN_TEXTS.get(key)
        if text is None:
            changed = _OPEN_TEXTS.pop(key, None) is not None or changed
        elif held is None or held[1] != text:
            _OPEN_TEXTS[key] = (next(_generations), text)
            changed = True
    return changed


def open_text(path: str) -> Optional[str]:
    """The open text read in place of the file, if any."""
    held = _OPEN_TEXTS.get(path) if _OPEN_TEXTS else None
    return held[1] if held is not None else None


def _stamp(path: str) -> Optional[Tuple[int, int]]:
    """(size, modification time) of a regular file; None for anything else (a FIFO would block its reader). For
    a file read from an open text, (its length, minus the text's generation)."""
    if _OPEN_TEXTS:
        held = _OPEN_TEXTS.get(path)
        if held is not None:
            return len(held[1]), -held[0]
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_size, found.st_mtime_ns) if stat.S_ISREG(found.st_mode) else None


def file_stamp(path: str) -> Optional[Tuple[int, int]]:
    """(size, modification time) of a regular file, or of its open text (`set_open_text`): what a cache of
    something read from it is keyed by."""
    return _stamp(path)


def read_text(path: str) -> Optional[str]:
    """The file's text (decoded as UTF-8, errors replaced); None when it cannot be read or is too big."""
    stamp = _stamp(path)
    if stamp is None or stamp[0] > _MAX_BYTES:
        return None
    return _read(path, *stamp)


def _read(path: str, size: int, mtime_ns: int) -> Optional[str]:
    if mtime_ns < 0:  # an open text's stamp: never cached (it is in memory), never the disk's
        held = _OPEN_TEXTS.get(path)
        return held[1] if held is not None and held[0] == -mtime_ns else None
    return _read_disk(path, size, mtime_ns)


@functools.lru_cache(maxsize=4096)
def _read_disk(path: str, size: int, mtime_ns: int) -> Optional[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            return stream.read()
    except OSError:
        return None


def file_summary(path: str) -> Optional[FileSummary]:
    stamp = _stamp(path)
    if stamp is None or stamp[0] > _MAX_BYTES:
        return None
    return _summary(path, *stamp)


@functools.lru_cache(maxsize=8192)  # every file of a big project, asked again for each function's callers
def _summary(path: str, size: int, mtime_ns: int) -> Optional[FileSummary]:
    text = _read(path, size, mtime_ns)
    return summarize(text) if text is not None else None


def file_words(path: str) -> FrozenSet[str]:
    """The identifiers and other words the file's text spells (a superset of the names its code uses)."""
    stamp = _stamp(path)
    if stamp is None or stamp[0] > _MAX_BYTES:
        return frozenset()
    return _words(path, *stamp)


@functools.lru_cache(maxsize=8192)
def _words(path: str, size: int, mtime_ns: int) -> FrozenSet[str]:
    text = _read(path, size, mtime_ns)
    return frozenset(_WORD.findall(text)) if text is not None else frozenset()


def _may_import(words: FrozenSet[str], stem: str) -> bool:
    """A file whose words are `words` may import the module named `stem` (a cheap superset, read before its
    summary): it spells the name. A name leads to a file of the project only through a dotted module path whose
    last part is that file's stem, or its package's folder (`ProjectIndex.resolve`: `from . import engine` with
    `engine.train(...)`, `from .engine import train`, `from .. import engine`), and that path is spelled in the
    file, a relative import's too: a file's relative imports alone are no sign that it imports the module."""
    return stem in words


def carriers_in(text: str, running: bool = False) -> Tuple[FrozenSet[Tuple[str, str]], FrozenSet[str]]:
    """(methods, functions): the (class, method) pairs of the top-level classes whose method's body spells a
    backward call, and the top-level functions whose body spells one or calls one of those functions of the
    file; read from the text's layout alone (a cheap superset: a call in a string or a comment counts). A
    method named as a backward the loop facts recognise by its name (`def backward(self, loss)`,
    `manual_backward`) is left out: a loop's call of it is a backward already. One that only contains the word
    (`backward_step`, `_backward`) is a carrier like any other.

    `running`: only the carriers that may run a backward on each call of theirs, as a loop's call of them runs
    one (`torchlint.training.calls.Functions.runs`): a backward in a `for` or `while` loop of the function's own
    (`train_one_epoch`'s, over its batches) is that loop's, and the epoch loop calling the function is no
    training loop through it."""
    if "backward" not in text:
        return frozenset(), frozenset()
    headers = _headers(text)
    strings = [match.span() for match in _TRIPLE_QUOTED.finditer(text)] if '"""' in text or "'''" in text else []
    methods: Set[Tuple[str, str]] = set()
    functions: Set[str] = set()
    looped: Dict[Tuple[str, str], Tuple[int, int]] = {}  # (class, method) -> its header's start and indentation
    for match in _BACKWARD.finditer(text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        if not text[line_start:line_start + 1].isspace() or _DEFINES.match(text, line_start, match.start()):
            continue  # at the top level, or `def backward(ctx, grad)`: not a call in a definition
        if "#" in text[line_start:match.start()] or any(start < match.start() < end for start, end in strings):
            continue  # in a comment or a docstring (`>>> accelerator.backward(loss)`)
        top, method = None, None
        for start, indent, kind, name in headers:
            if start > line_start:
                break
            if indent == 0:
                top, method = (kind, name, start), None
            elif kind == "def" and method is None or (method is not None and indent <= method[0]):
                method = (indent, name, start) if kind == "def" else None
        if top is None:
            continue
        if running and (top[0] == "def" or method is not None) \
                and _in_own_loop(text, line_start, top[2] if top[0] == "def" else method[2], strings):
            if top[0] != "def" and method[1] not in _BACKWARD_NAMES:
                looped[(top[1], method[1])] = (method[2], method[0])
            continue
        if top[0] == "def":
            functions.add(top[1])
        elif method is not None and method[1] not in _BACKWARD_NAMES:
            methods.add((top[1], method[1]))
    if functions:  # a function that calls one of the file's carrier functions (two deep)
        calls = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, functions))) + r")\s*\(")
        tops = [(start, kind, name) for start, indent, kind, name in headers if indent == 0]
        bounds = [start for start, _, _ in tops[1:]] + [len(text)]
        for (start, kind, name), end in zip(tops, bounds):
            if kind == "def" and name not in functions and calls.search(text, start, end):
                functions.add(name)
    for (class_name, name), (start, indent) in looped.items():
        # a method whose own backward is its loop's may still call, on each call, one of its class that runs one,
        # or a function of the file that does (two deep, as the analysis follows it)
        called = {method for owner, method in methods if owner == class_name}
        end = next((other for other, depth, _, _ in headers if other > start and depth <= indent), len(text))
        if (class_name, name) not in methods and (
                any(spells_word(text[start:end], f"self.{method}") for method in called)
                or any(spells_word(text[start:end], function) for function in functions)):
            methods.add((class_name, name))
    return frozenset(methods), frozenset(functions)


def _in_own_loop(text: str, line_start: int, header: int, strings: List[Tuple[int, int]]) -> bool:
    """Whether the line that starts at `line_start` sits in the body of a `for` or `while` statement below the
    definition whose header line starts at `header`, by the layout: the lines above it, each less indented than
    every line met since, are the headers of the blocks around it. A blank or comment line, or a line in a
    triple-quoted string (`strings`: spans), says nothing. Where the layout misleads (a line that continues a
    bracket further left), the answer is no, which keeps the function a carrier."""
    indent = _indentation(text, line_start)
    end = line_start - 1  # the line break that ends the line above
    while end > header:
        start = text.rfind("\n", 0, end) + 1
        stripped = text[start:end].strip()
        if stripped and stripped[0] != "#" and not any(a < start < b for a, b in strings):
            depth = _indentation(text, start)
            if depth < indent:
                indent = depth
                if stripped.startswith(("for ", "while ", "async for ", "while(")) \
                        and _code_part(stripped).endswith(":"):
                    return True
        end = start - 1
    return False


def _indentation(text: str, line_start: int) -> int:
    end = line_start
    while end < len(text) and text[end] in " \t":
        end += 1
    return len(text[line_start:end].expandtabs())


def _code_part(line: str) -> str:
    """A stripped line less a trailing comment, where no quote on the line could hold the `#`."""
    if "#" in line and "'" not in line and '"' not in line:
        line = line[:line.index("#")]
    return line.rstrip()


def _headers(text: str) -> List[Tuple[int, int, str, str]]:
    """(position, indentation, `def` or `class`, name) of each definition's header line, in source order; by
    string searches (a regular expression anchored at every line start is several times slower)."""
    found = []
    for keyword in ("def", "class"):
        at = text.find(keyword + " ")
        while at >= 0:
            line_start = text.rfind("\n", 0, at) + 1
            prefix = text[line_start:at]
            stripped = prefix.strip()
            if stripped in ("", "async") and (not stripped or prefix.rstrip() != prefix):
                name = _WORD.match(text, at + len(keyword) + 1)
                if name is not None:
                    indent = len(prefix.expandtabs()) - len(prefix.expandtabs().lstrip())
                    found.append((line_start, indent, keyword, name.group()))
            at = text.find(keyword + " ", at + len(keyword))
    found.sort()
    return found


@functools.lru_cache(maxsize=4096)
def _carriers(path: str, size: int, mtime_ns: int) -> Tuple[FrozenSet[Tuple[str, str]], FrozenSet[str]]:
    if mtime_ns >= 0 and not _bytes_spell_backward(path):
        return frozenset(), frozenset()  # most files of a project: a read and a search, nothing decoded or kept
    text = _read(path, size, mtime_ns)
    if text is None or "backward" not in text or not _BACKWARD.search(text):
        return frozenset(), frozenset()
    return carriers_in(text)


@functools.lru_cache(maxsize=1024)
def _running_carriers(path: str, size: int, mtime_ns: int
                      ) -> Optional[Tuple[FrozenSet[Tuple[str, str]], FrozenSet[str]]]:
    text = _read(path, size, mtime_ns)
    return carriers_in(text, running=True) if text is not None else None


def _bytes_spell_backward(path: str) -> bool:
    """Whether the file's bytes spell `backward`: so does its text, decoded (ASCII bytes are never part of
    another character in UTF-8, and what does not decode becomes U+FFFD)."""
    try:
        with open(path, "rb") as stream:
            return b"backward" in stream.read()
    except OSError:
        return False


def module_stem(path: str) -> str:
    """The last part of the module name a file is imported by: `misc` for `util/misc.py`, `util` for
    `util/__init__.py`."""
    stem = os.path.splitext(os.path.basename(path))[0]
    return os.path.basename(os.path.dirname(path)) if stem == "__init__" else stem


# --- the project -------------------------------------------------------------------------------------


class ProjectIndex:
    """The Python files under one root, and what the facts ask of them."""

    def __init__(self, root: str, files: Tuple[str, ...], complete: bool) -> None:
        self.root = root
        self.files = files
        self.complete = complete  # every Python file of the root is listed
        self.lookup = Lookup()
        self._carriers: Optional[Dict[str, Tuple[FrozenSet[Tuple[str, str]], FrozenSet[str]]]] = None
        self._handoffs: Dict[Tuple[str, int, int, bool], Dict[str, Set[str]]] = {}  # (path, length, hash, running)
        # (carriers, running carriers, both pickled), made again when they change
        self._carriers_pickled: Optional[tuple] = None
        self._import_lines: Optional[Dict[str, FrozenSet[str]]] = None  # file -> the words of its import lines
        self._by_import: Optional[Dict[str, List[str]]] = None  # a word of import lines -> the files spelling it
        # by `running` (see `_classes_called_in`): carrier method -> its classes, and a pattern of their calls
        self._classes_by_method: Dict[bool, Tuple[Dict[str, FrozenSet[str]], Optional["re.Pattern[str]"]]] = {}
        self._calls: Dict[str, FrozenSet[str]] = {}
        self._functions: Optional[FrozenSet[str]] = None
        self._methods: Optional[FrozenSet[str]] = None
        self._by_stem: Dict[bool, Dict[str, FrozenSet[str]]] = {}  # by `running` (see `carriers_by_stem`)
        self._file_set: Optional[FrozenSet[str]] = None
        self._running: Optional[Dict[str, Tuple[FrozenSet[Tuple[str, str]], FrozenSet[str]]]] = None

    @staticmethod
    def of(path: str) -> "ProjectIndex":
        root = project_root(path)
        return _index(root, int(time.monotonic() // _LISTING_SECONDS), _relistings.get(root, 0))

    def refresh(self, path: str) -> bool:
        """Bring what the index knows up to date after the file `path` changed (`file_changed`): its carriers,
        and what was derived from them only when they changed; the files that spell a carrier class, the names
        it calls and the hand-offs, for that file. No other file is read again. True when the file's carriers
        changed (it gained or lost a function or method that runs a backward): any file of the project may now
        call into training, or no longer."""
        path = os.path.abspath(path)
        changed = False
        if self._carriers is not None:
            fresh = _carriers_now(path)
            held = self._carriers.get(path, (frozenset(), frozenset()))
            changed = fresh != held
            if changed:
                if fresh[0] or fresh[1]:
                    self._carriers[path] = fresh
                else:
                    self._carriers.pop(path, None)
                self._functions = self._methods = self._carriers_pickled = None
        if self._import_lines is not None:
            self._by_import = None
            self._import_lines.pop(path, None)
            if path in self._listed():
                text = read_text(path)
                self._import_lines[path] = import_words(text) if text is not None else frozenset()
        self._calls.pop(path, None)
        self._handoffs.clear()
        # and a backward moved into a loop of its function, or out of one, though the carriers' names stay
        self._running = None
        self._by_stem.clear()
        self._classes_by_method.clear()
        return changed

    def carriers_held(self, path: str) -> Tuple[FrozenSet[Tuple[str, str]], FrozenSet[str]]:
        """The carriers of the file `path` as this index last read them (none if it read none)."""
        return (self._carriers or {}).get(os.path.abspath(path), (frozenset(), frozenset()))

    def _listed(self) -> FrozenSet[str]:
        if self._file_set is None:
            self._file_set = frozenset(self.files)
        return self._file_set

    def carriers(self) -> Dict[str, Tuple[FrozenSet[Tuple[str, str]], FrozenSet[str]]]:
        """File -> its carrier (methods, functions) (`carriers_in`), for the files that have some."""
        if self._carriers is None:
            self._carriers = {}
            for path in self.files:
                stamp = _stamp(path)
                if stamp is not None and stamp[0] <= _MAX_BYTES:
                    methods, functions = _carriers(path, *stamp)
                    if methods or functions:
                        self._carriers[path] = (methods, functions)
        return self._carriers

    def carriers_by_stem(self, running: bool = False) -> Dict[str, FrozenSet[str]]:
        """`module_stem` of a file -> the names of its carrier classes and functions (over the files that stem);
        `running`: of those that run a backward on each call (`running_carriers`)."""
        if running not in self._by_stem:
            by_stem: Dict[str, Set[str]] = {}
            for path, (methods, functions) in (self._running_files() if running else self.carriers()).items():
                by_stem.setdefault(module_stem(path), set()).update({name for name, _ in methods} | functions)
            self._by_stem[running] = {stem: frozenset(names) for stem, names in by_stem.items()}
        return self._by_stem[running]

    def carries(self, path: str, name: str, method: Optional[str] = None) -> bool:
        """The top-level function `name` of the file `path`, or the method `method` of its class `name`, runs a
        backward (`carriers_in`)."""
        methods, functions = self.carriers().get(path, (frozenset(), frozenset()))
        return (name, method) in methods if method is not None else name in functions

    def carrier_functions(self) -> FrozenSet[str]:
        """The names of the top-level functions that run a backward in some file of the project."""
        if self._functions is None:
            self._functions = frozenset(name for _, functions in self.carriers().values() for name in functions)
        return self._functions

    def carrier_methods(self) -> FrozenSet[str]:
        """The names of the methods that run a backward in some class of the project (`__call__`, `step`)."""
        if self._methods is None:
            self._methods = frozenset(method for methods, _ in self.carriers().values() for _, method in methods)
        return self._methods

    def running_carriers(self) -> Tuple[FrozenSet[str], FrozenSet[str]]:
        """(function names, method names): `carrier_functions` and `carrier_methods` less the carriers whose
        backward runs only in a loop of their own (`carriers_in` with `running`): what the screen asks of a loop's
        call."""
        carriers = self._running_files().values()
        return (frozenset(name for _, functions in carriers for name in functions),
                frozenset(method for methods, _ in carriers for _, method in methods))

    def _running_files(self) -> Dict[str, Tuple[FrozenSet[Tuple[str, str]], FrozenSet[str]]]:
        """`carriers`, of the carriers that run a backward on each call (`carriers_in` with `running`). A carrier
        file that cannot be read again keeps its carriers."""
        if self._running is None:
            self._running = {}
            for path, held in self.carriers().items():
                stamp = _stamp(path)
                found = _running_carriers(path, *stamp) if stamp is not None else None
                methods, functions = found if found is not None else held
                if methods or functions:
                    self._running[path] = (methods, functions)
        return self._running

    def handoffs(self, path: str, text: str, running: bool = False) -> Dict[str, Set[str]]:
        """Function of the file `path` (whose text is `text`) -> the parameters (a position, as digits, or a
        keyword) that a file of the project hands an object built from a carrier class whose carrier method
        the text may call: its `__call__` (`train_one_epoch(..., loss_scaler)` in `main.py`), or a method the
        text spells as called (`.backward_step(` of a `GradUpdater`). Read from the files that spell both such
        a class and the file's module; by function name (a superset: the analysis resolves). `running`: of the
        classes whose method runs a backward on each call (`running_carriers`)."""
        key = (path, len(text), hash(text), running)
        known = self._handoffs.get(key)
        if known is not None:
            return known
        found: Dict[str, Set[str]] = {}
        defined = top_level_functions(text)  # most files of a big project define none, or the index knows no class
        classes = self._classes_called_in(text, running) if defined and self.carriers() else frozenset()
        stem = module_stem(path)
        candidates = ([path] + [other for other in self._importers().get(stem, ()) if other != path]) if classes else []
        # the files importing the file's module that build an object of one of the classes
        spelling = [other for other in candidates if _builds_any(other, classes)]
        if spelling:
            for other in spelling:
                if self._called(other).isdisjoint(defined):
                    continue  # it calls none of the file's functions
                summary = file_summary(other)
                if summary is not None:
                    _collect_handoffs(summary, classes, defined, found)
        self._handoffs[key] = found
        return found

    def facts_of(self, path: str, text: str) -> "IndexFacts":
        """What a process forked before this one indexed the project needs of it to screen and analyse the file
        `path` whose text is `text` (`adopt`): the carriers, those that run a backward on each call, and the
        file's hand-offs (those to running carriers too, when the prefilter asked them here)."""
        path = os.path.abspath(path)
        carriers, running = self.carriers(), self._running_files()
        if self._carriers_pickled is None or self._carriers_pickled[0] is not carriers \
                or self._carriers_pickled[1] is not running:
            self._carriers_pickled = (carriers, running, pickle.dumps((carriers, running), pickle.HIGHEST_PROTOCOL))
        key = (path, len(text), hash(text))
        return IndexFacts(self.root, self._carriers_pickled[2], path, len(text), key[2], self.handoffs(path, text),
                          self._handoffs.get((*key, True)))

    def _classes_called_in(self, text: str, running: bool = False) -> FrozenSet[str]:
        """The carrier classes whose carrier method `text` may call on an object: every one with a `__call__`
        that runs a backward, and those whose other such method the text spells after a dot (`.backward_step(`);
        `running`: of the methods that run one on each call. String searches first: most texts spell none."""
        if running not in self._classes_by_method:
            by_method: Dict[str, Set[str]] = {}
            for methods, _ in (self._running_files() if running else self.carriers()).values():
                for name, method in methods:
                    by_method.setdefault(method, set()).add(name)
            others = sorted(method for method in by_method if method != "__call__")
            self._classes_by_method[running] = (
                {method: frozenset(names) for method, names in by_method.items()},
                re.compile(r"\.\s*(" + "|".join(map(re.escape, others)) + r")\s*\(") if others else None)
        classes, method_call = self._classes_by_method[running]
        found: Set[str] = set(classes.get("__call__", ()))
        if method_call is not None and "." in text:  # one pass over the text for every method at once
            for method in set(method_call.findall(text)):
                found |= classes[method]
        return frozenset(found)

    def _called(self, path: str) -> FrozenSet[str]:
        """The names a file calls (`name(`), once per index."""
        if path not in self._calls:
            text = read_text(path)
            self._calls[path] = frozenset(_CALLED.findall(text)) if text is not None else frozenset()
        return self._calls[path]

    def _importers(self) -> Dict[str, List[str]]:
        """Word of an import line -> the files whose import lines spell it (once per index)."""
        if self._by_import is None:
            by_import: Dict[str, List[str]] = {}
            for path, words in self._import_words().items():
                for word in words:
                    by_import.setdefault(word, []).append(path)
            self._by_import = by_import
        return self._by_import

    def _import_words(self) -> Dict[str, FrozenSet[str]]:
        """File -> the words of its import lines (`import_words`), for every file of the project (once per
        index): the files that may hand one of its functions something are those whose imports name its module."""
        if self._import_lines is None:
            self._import_lines = {}
            for path in self.files:
                text = read_text(path)
                if text is not None:
                    self._import_lines[path] = import_words(text) if "import" in text else frozenset()
        return self._import_lines

    def callers(self, path: str, function: str) -> Optional[List[Tuple[str, CallSummary]]]:
        """The calls of the top-level function `function` of the file `path`, across the project: in that file,
        and in the files whose imports lead to it. None when the project is not listed whole."""
        if not self.complete:
            return None
        stem = module_stem(path)
        target = os.path.abspath(path)
        found: List[Tuple[str, CallSummary]] = []
        for other in self.files:
            words = file_words(other)
            if function not in words:
                continue
            same = os.path.abspath(other) == target
            if not same and not _may_import(words, stem):
                continue
            summary = file_summary(other)
            if summary is None:
                continue
            for call in summary.calls:
                if same and call.callee == function:
                    if function in summary.functions:
                        found.append((other, call))
                else:  # the name first: finding the module's file is the dearer half
                    named = _named(summary, call.callee)
                    if named is not None and named[2] == function \
                            and self._located(other, named) == (target, function):
                        found.append((other, call))
        return found

    def passed_as_value(self, path: str, function: str) -> bool:
        """Whether a file of the project names the top-level function `function` of the file `path` other than
        to call it, define it or import it (`callbacks = [train_one_epoch]`, `pool.map(run_epoch, ...)`,
        `HOOKS = [engine.train]`, a rebinding): it may then run with arguments no call in the project shows.
        The files are those `callers` reads; their syntax trees say how the name is used, so the word in a
        string (`split='train'`), a keyword (`train=True`) or an attribute of an object other than an imported
        module (`args.train`) is no such use. A file Python cannot parse counts when its text has the word."""
        stem = module_stem(path)
        target = os.path.abspath(path)
        for other in self.files:
            words = file_words(other)
            if function not in words:
                continue
            text = read_text(other)
            if text is None:
                continue
            own = os.path.abspath(other) == target
            if not own and not (_may_import(words, stem) and self._imports(other, target, function)):
                continue
            summary = file_summary(other) if not own else None
            modules = frozenset(summary.imports) if summary is not None else frozenset()
            if _names_as_value(text, function, modules):
                return True
        return False

    def _imports(self, importer: str, target: str, function: str) -> bool:
        """The file `importer` imports the function `function` of the file `target`, or that file's module."""
        summary = file_summary(importer)
        if summary is None:
            return True  # unread: it may
        wanted = (target, function)
        stem = module_stem(target)
        return any(self.resolve(importer, summary, local) == wanted
                   or self.resolve(importer, summary, f"{local}.{function}") == wanted
                   for local, (_, origin) in summary.imports.items()
                   if origin.rsplit(".", 1)[-1] in (function, stem) or local == stem)

    def resolve(self, importer: str, summary: FileSummary, dotted: str) -> Optional[Tuple[str, str]]:
        """(file, top-level name) a dotted name of `importer` leads to through its imports, among the project's
        files: `NativeScaler` -> (`.../util/misc.py`, `NativeScalerWithGradNormCount`); a top-level class or
        function `importer` defines itself -> (`importer`, name). None when it leads out of the project, or
        to something other than a top-level name of a module."""
        named = _named(summary, dotted)
        return self._located(importer, named) if named is not None else None

    def _located(self, importer: str, named: Tuple[Optional[int], str, str]) -> Optional[Tuple[str, str]]:
        """(file, name) for what `_named` read of a dotted name of `importer`."""
        level, module, name = named
        if level is None:
            return os.path.abspath(importer), name
        found = module_file(importer, module, level, self.lookup)
        return (os.path.abspath(str(found)), name) if found is not None else None


def _named(summary: FileSummary, dotted: str) -> Optional[Tuple[Optional[int], str, str]]:
    """(import level, module, top-level name) a dotted name of the file summed up in `summary` stands for through
    its imports (`ProjectIndex.resolve` without looking for the module's file); level None for a class or
    function the file defines itself (module ""). None for a name neither imported nor defined there, or an
    import of a module itself."""
    head, _, rest = dotted.partition(".")
    if head not in summary.imports:
        if not rest and (head in summary.functions or head in summary.classes):
            return None, "", head
        return None
    level, origin = summary.imports[head]
    parts = (f"{origin}.{rest}" if rest else origin).split(".")
    if len(parts) < 2:
        return None
    return level, ".".join(parts[:-1]), parts[-1]


def _names_as_value(text: str, name: str, modules: FrozenSet[str]) -> bool:
    """`text` uses the name `name` other than as the callee of a call, or an attribute so named of one of
    `modules` (`engine.train_one_epoch`; `modules`: the names the file imports). Definitions, imports,
    keywords, parameters and other objects' attributes so named are no uses."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return re.search(r"\b" + re.escape(name) + r"\b", text) is not None
    callees = set()
    for node in all_nodes(tree):
        kind = type(node)
        if kind is ast.Call:
            callees.add(id(node.func))
        elif kind is ast.Name:
            if node.id == name and id(node) not in callees:
                return True
        elif kind is ast.Attribute and node.attr == name and id(node) not in callees and modules:
            root = node.value
            while type(root) is ast.Attribute:
                root = root.value
            if type(root) is ast.Name and root.id in modules:
                return True
    return False


def _collect_handoffs(summary: FileSummary, classes: FrozenSet[str], functions: Set[str],
                      into: Dict[str, Set[str]]) -> None:
    def carrier(dotted: Optional[str]) -> bool:
        if dotted is None:
            return False
        head, _, rest = dotted.partition(".")
        if head in summary.imports:
            origin = summary.imports[head][1]
            dotted = f"{origin}.{rest}" if rest else origin
        return dotted.rsplit(".", 1)[-1] in classes

    for call in summary.calls:
        function = call.callee.rsplit(".", 1)[-1]
        if function not in functions:
            continue
        passed = [(str(index), argument) for index, argument in enumerate(call.positional)] + list(call.keywords)
        for where, argument in passed:
            values = (argument.built,) if argument.built is not None else (
                summary.values_of(call.scope, argument.name) if argument.name is not None else ())
            if any(carrier(value) for value in values):
                into.setdefault(function, set()).add(where)


@dataclass(frozen=True)
class IndexFacts:
    """What the index of a project says for one of its files (`ProjectIndex.facts_of`): the carriers of every file
    of the project (all, and those that run a backward on each call), and the file's hand-offs
    (`ProjectIndex.handoffs`), for its text of this length and hash.
    Read in one process and adopted in the processes it hands files to (`adopt`), which then read no other file of
    the project to screen the file: on a cold run over a big project, each worker used to read and index the
    whole project again."""

    root: str
    carriers: bytes  # `ProjectIndex.carriers` and `_running_files`, pickled once per index: the same bytes go with
    # every file
    path: str
    length: int
    text_hash: int  # `hash` of the text: the same in a process forked from the one that made it
    handoffs: Dict[str, Set[str]]
    # `ProjectIndex.handoffs` with `running`, where this process asked them (its prefilter, `may_call_into_training`)
    running_handoffs: Optional[Dict[str, Set[str]]] = None


def facts_for(path: str, text: str) -> Optional[IndexFacts]:
    """The index's facts for a file a worker will screen (`IndexFacts`); None where the file is no module of a
    project whose loops could call into another file (`may_call_into_training` asks the same first)."""
    if not path or path == "-" or not path.endswith(".py") or ("for" not in text and "while" not in text):
        return None
    return ProjectIndex.of(path).facts_of(path, text)


def adopt(facts: IndexFacts) -> None:
    """Take the facts another process read of a project (`IndexFacts`) as this process's own: its index of the
    project then reads no file to know the carriers, or the file's hand-offs."""
    index = ProjectIndex.of(facts.path)
    if index.root != facts.root:
        return
    if index._carriers is None:
        index._carriers, running = pickle.loads(facts.carriers)
        if index._running is None:
            index._running = running
    key = (facts.path, facts.length, facts.text_hash)
    index._handoffs.setdefault((*key, False), facts.handoffs)
    if facts.running_handoffs is not None:
        index._handoffs.setdefault((*key, True), facts.running_handoffs)


# Root -> how many times its listing was declared stale (`file_changed(..., listed=True)`): part of the key.
_relistings: Dict[str, int] = {}
# Root -> the index last made for it: the one `file_changed` brings up to date.
_latest: Dict[str, ProjectIndex] = {}


_changes = 0


def changes() -> int:
    """How many times `file_changed` was called: what was derived from the project's files before is stale."""
    return _changes


def file_changed(path: str, listed: bool = False) -> bool:
    """The file `path` changed (on disk, or its open text, `set_open_text`): the indexes made so far forget what
    they knew of it. `listed`: it was created or deleted, so the listing of its project is made again. True
    when what the file carries changed for an index that had read it (`ProjectIndex.refresh`): then any file of
    its project may call into training now, or no longer, not only those whose findings rested on it."""
    global _changes
    _changes += 1
    keys = _open_keys(path)
    changed = False
    for root, index in list(_latest.items()):
        if not any(key.startswith(root.rstrip(os.sep) + os.sep) for key in keys):
            continue
        if listed:
            _relistings[root] = _relistings.get(root, 0) + 1
            del _latest[root]
            changed = changed or any(index.carriers_held(key) != _carriers_now(key) for key in keys)
        else:
            for key in keys:
                changed = index.refresh(key) or changed
    return changed


def _carriers_now(path: str) -> Tuple[FrozenSet[Tuple[str, str]], FrozenSet[str]]:
    """The file's carriers as it reads now (none when it is gone or too big)."""
    stamp = _stamp(path)
    return _carriers(path, *stamp) if stamp is not None and stamp[0] <= _MAX_BYTES else (frozenset(), frozenset())


def _index(root: str, epoch: int, relisting: int = 0) -> ProjectIndex:
    index = _listing(root, epoch, relisting)
    _latest[root] = index
    return index


@functools.lru_cache(maxsize=64)
def _listing(root: str, epoch: int, relisting: int) -> ProjectIndex:
    files: List[str] = []
    complete = True
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if entry.name not in _SKIPPED_FOLDERS and not entry.name.startswith("."):
                    pending.append(entry.path)
            elif entry.name.endswith(".py"):
                files.append(entry.path)
        if len(files) > _MAX_FILES:
            complete = False
            break
    return ProjectIndex(root, tuple(files), complete)


# --- what a cache entry rests on ----------------------------------------------------------------


def project_stamp(root: str) -> Tuple[str, int, int]:
    """A stamp of every Python file of the project at `root`, in the form of a file's (path, size, modification
    time): (the root and a separator, -1, a digest of each file's path, size and modification time). A file
    created, deleted or changed anywhere in the project changes it. What the facts read of a project (the
    callers of a function, which files run a backward) may rest on any of its files."""
    digest = hashlib.blake2b(digest_size=7)
    listing = _listing(root, int(time.monotonic() // _LISTING_SECONDS), _relistings.get(root, 0))
    for path in listing.files:
        stamp = _stamp(path)
        digest.update(f"{path}\0{stamp}\0".encode("utf-8", "surrogatepass"))
    return root.rstrip(os.sep) + os.sep, -1, int.from_bytes(digest.digest(), "big")


# --- the prefilter's question --------------------------------------------------------------------


def may_call_into_training(text: str, path: str) -> bool:
    """Whether a file that spells no backward of its own may still hold a training loop whose backward runs in
    another file of the project (`entry_words`): a loop's call runs one only through a carrier that runs one on
    each call (`ProjectIndex.running_carriers`), so only those count. A cheap superset, from texts alone; the
    analysis decides."""
    if not path or path == "-" or not path.endswith(".py") or ("for" not in text and "while" not in text):
        return False
    index = ProjectIndex.of(path)
    return bool(_carrier_words(text, index, running=True)) or bool(
        index.handoffs(os.path.abspath(path), text, running=True))


def import_words(text: str) -> FrozenSet[str]:
    """The words of a text's import lines (`from util.misc import NativeScaler` gives `util`, `misc`...; of an
    import over several lines, its first). Found with string searches: a regular expression anchored at every
    line start is several times slower on a big file."""
    lines: List[str] = []
    for start, end in lines_spelling(text, "import"):
        line = text[start:end].lstrip()
        if line.startswith(("from ", "import ", "from\t", "import\t")):
            lines.append(line)
    return frozenset(_WORD.findall("\n".join(lines)))


def top_level_functions(text: str) -> Set[str]:
    """The names of a text's top-level functions (`def name(` at the start of a line), by string searches."""
    found: Set[str] = set()
    for keyword in ("def ", "async def "):
        at = 0 if text.startswith(keyword) else text.find("\n" + keyword)
        while at >= 0:
            begin = at + (0 if at == 0 and text.startswith(keyword) else 1) + len(keyword)
            match = _WORD.match(text, begin)
            if match is not None:
                found.add(match.group())
            at = text.find("\n" + keyword, begin)
    return found


# What may stand between a callee and its `(` (blanks, line continuations, comments), or between an imported name
# and the `as` that renames it.
# A comment runs to its line's end (the lookahead): the pattern cannot split one in two ways and backtrack
# exponentially over a long comment line with no call after it.
_THEN_CALLED = re.compile(r"(?:\s|\\|#[^\n]*(?=\n|$))*\(")
_THEN_RENAMED = re.compile(r"(?:\s|\\|#[^\n]*(?=\n|$))+as\b")


def _builds_any(path: str, classes: FrozenSet[str]) -> bool:
    """Whether the file's text may build an object of one of `classes`: it spells a call of one of them by its
    name (`NativeScaler(`, `misc.NativeScaler(`), not in its `class` statement, or imports one under another name
    (`NativeScaler as Scaler`). What a hand-off passes is such a call's value (`_collect_handoffs`), so a file that
    spells neither hands none; by string searches, as `spells_word` (a cheap superset: a string or a comment
    counts)."""
    text = read_text(path)
    if text is None:
        return False
    for name in classes:
        at = text.find(name)
        while at >= 0:
            end = at + len(name)
            before = text[at - 1] if at else " "
            if not (before.isalnum() or before == "_" or (end < len(text) and (text[end].isalnum() or text[end] == "_"))):
                if _THEN_CALLED.match(text, end) is not None:
                    line_start = text.rfind("\n", 0, at) + 1
                    if text[line_start:at].strip() != "class":
                        return True
                elif _THEN_RENAMED.match(text, end) is not None:
                    return True
            at = text.find(name, at + 1)
    return False


def spells_word(text: str, word: str) -> bool:
    """Whether `text` spells the identifier `word` as a whole word (as `\\bword\\b` would find it), by string
    searches: a regular expression that starts with `\\b` scans the text at every position, many times slower."""
    at = text.find(word)
    end = len(word)
    while at >= 0:
        before = text[at - 1] if at else " "
        after = text[at + end] if at + end < len(text) else " "
        if not (before.isalnum() or before == "_" or after.isalnum() or after == "_"):
            return True
        at = text.find(word, at + 1)
    return False


def entry_words(text: str, path: str, index: ProjectIndex) -> FrozenSet[str]:
    """The words of `text` through which a loop may call into a carrier of the project: the carriers' names it
    spells, of the files its import lines name (`from util.misc import NativeScalerWithGradNormCount`), and
    the names of its functions that another file hands a carrier object (`def train_one_epoch(`)."""
    if not index.carriers_by_stem():
        return frozenset()
    return frozenset(_carrier_words(text, index) | set(index.handoffs(path, text)))


def _carrier_words(text: str, index: ProjectIndex, running: bool = False) -> Set[str]:
    """The carriers' names `text` spells, of the files its import lines name (see `entry_words`); `running`:
    of the carriers that run a backward on each call (`ProjectIndex.running_carriers`)."""
    by_stem = index.carriers_by_stem(running)
    if not by_stem:
        return set()
    found: Set[str] = set()
    for stem in import_words(text) & by_stem.keys():
        found |= {name for name in by_stem[stem] if spells_word(text, name)}
    return found


def entry_names(tree: ast.Module, text: str, path: str, words: FrozenSet[str], index: ProjectIndex) -> Set[str]:
    """The names a loop of this file may call to run a carrier (`entry_words`): the carriers' names and their
    aliases, the names bound to what they build, and the parameters of the file's functions that another file
    hands a carrier object (`loss_scaler` of `train_one_epoch`). Statements only are walked."""
    names = set(words)
    handed = index.handoffs(path, text)
    assignments: List[ast.Assign] = []
    pending: List[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(alias.asname for alias in node.names
                         if alias.asname and alias.name.rsplit(".", 1)[-1] in words)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            assignments.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in handed:
            arguments = node.args
            positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
            every = set(positional) | {a.arg for a in arguments.kwonlyargs}
            for where in handed[node.name]:
                if not where.isdigit():
                    names.update({where} & every)
                    continue
                for shift in (0, 1):  # a method's `self` is not passed
                    if int(where) + shift < len(positional):
                        names.add(positional[int(where) + shift])
        for block in ("body", "orelse", "finalbody"):
            inner = getattr(node, block, None)
            if inner and isinstance(inner[0], ast.stmt):
                pending.extend(inner)
        for part in getattr(node, "handlers", ()) or getattr(node, "cases", ()):
            pending.extend(part.body)
    for node in assignments:
        callee = _dotted(node.value.func)
        if callee is not None and not set(callee.split(".")).isdisjoint(names):
            for target in node.targets:
                name = _dotted(target)
                if name is not None:
                    names.add(name.rsplit(".", 1)[-1])
    return names
