"""A file of the project read with LibCST when a fact needs it (`imports` says which file an import names).

A module read here is parsed whole once per process and content (path, size, modification time);
what the facts take from it is a function or a class of it and its own names. A file that does not
parse, or is too big to be worth it, is not the project's as far as the facts go.

What an object called in a loop is (`ProjectFiles.carrier_of`, `handed`) is read from the project's
index (`torchlint.project.index`, stdlib `ast`); only the file of the class or function it leads to
is parsed, and only when the index says that class's method or that function runs a backward.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple, Union

import libcst as cst

from torchlint.names import ModuleNames
from torchlint.project.imports import Lookup, module_file
from torchlint.project.index import ProjectIndex, changes, file_stamp, file_summary, open_text, read_text

# Modules bigger than this are not read for a fact (a vendored library, generated code).
_MAX_BYTES = 1_000_000

Definition = Union[cst.FunctionDef, cst.ClassDef]


@dataclass(frozen=True)
class ProjectModule:
    """A file of the project, parsed: its module and the names it binds (with its own imports resolved)."""

    path: Path
    module: cst.Module
    names: ModuleNames

    @functools.cached_property
    def functions(self):
        """The module's functions as `training.calls.Functions` indexes them (their graphs, their returns)."""
        from torchlint.training.calls import Functions

        return Functions(self.module, self.names)

    def definition(self, dotted: str) -> Optional[Definition]:
        """`ComputeLoss`, `masked_mean` or `Trainer.step`: a top-level function or class, or a method of one."""
        head, _, rest = dotted.partition(".")
        found = _top_level(self.module.body, head)
        if not rest or found is None:
            return found
        if isinstance(found, cst.ClassDef) and "." not in rest:
            return _top_level(found.body.body, rest)
        return None


class ProjectFiles:
    """The project as seen from one file: where its imports lead, and what is defined there."""

    def __init__(self, importer: Path) -> None:
        self.importer = importer
        # The project files the facts read for the importer, to the depth they followed: its findings rest on
        # them (a cache entry of the importer is valid while they are unchanged). Filled by `training.origin`.
        self.used: Set[str] = set()
        self.lookup = Lookup()
        self._handed: Dict[Tuple[str, str, str], Optional[Tuple[ProjectModule, cst.FunctionDef]]] = {}
        self._handed_as_of = changes()

    @property
    def index(self) -> ProjectIndex:
        """The importer's project, indexed (`torchlint.project.index`): the index made last, which a long-lived
        process keeps up to date (a parsed module, and this with it, outlives many lints)."""
        return ProjectIndex.of(str(self.importer))

    def locate(self, level: int, dotted: str) -> Optional[Tuple[str, str]]:
        """(file, top-level name) an imported dotted name leads to in the project: `(0, util.misc.NativeScaler)`
        -> (`.../util/misc.py`, `NativeScaler`)."""
        parts = dotted.split(".")
        if len(parts) < 2:
            return None
        path = module_file(self.importer, ".".join(parts[:-1]), level, self.lookup)
        return (os.path.abspath(str(path)), parts[-1]) if path is not None else None

    def carrier(self, path: str, name: str, method: Optional[str] = None
                ) -> Optional[Tuple[ProjectModule, cst.FunctionDef]]:
        """The top-level function `name` of the file `path`, or the method `method` of its class `name`, parsed,
        when the index says it runs a backward (`ProjectIndex.carries`); the file is then one the facts read."""
        if not self.index.carries(path, name, method):
            return None
        module = load(Path(path))
        if module is None:
            return None
        self.used.add(str(module.path))
        if method is None:
            found = module.definition(name)
            return (module, found) if isinstance(found, cst.FunctionDef) else None
        function = module.functions.method_of_class(name, method)
        return (module, function) if function is not None else None

    def handed(self, function: cst.FunctionDef, parameter: str, method: str
               ) -> Optional[Tuple[ProjectModule, cst.FunctionDef]]:
        """What an object that the importer's top-level `function` receives as `parameter` runs when called
        (`method` `__call__`; a method called by name on a parameter is not followed): the `__call__` of the one
        class of the project whose objects every call of `function` in the project passes for `parameter`
        (`main.py` builds `loss_scaler = NativeScaler()` and calls `train_one_epoch(..., loss_scaler)`). None when no call is found, one passes
        something else or nothing (a default), or they pass objects of different classes: what the parameter
        holds is then unknown. Every file read for the answer is one the facts rest on."""
        key = (function.name.value, parameter, method)
        if self._handed_as_of != changes():  # a file of the project changed since: the answers may differ
            self._handed.clear()
            self._handed_as_of = changes()
        if key not in self._handed:
            self._handed[key] = self._handed_class(function, parameter, method)
        return self._handed[key]

    def _handed_class(self, function: cst.FunctionDef, parameter: str, method: str
                      ) -> Optional[Tuple[ProjectModule, cst.FunctionDef]]:
        index = self.index
        params = function.params
        positional = [p.name.value for p in (*params.posonly_params, *params.params)]
        keywords = positional + [p.name.value for p in params.kwonly_params]
        importer = os.path.abspath(str(self.importer))
        text = read_text(importer)
        handed = index.handoffs(importer, text).get(function.name.value, ()) if text is not None else ()
        if method != "__call__" or parameter not in keywords or not (
                parameter in handed or (parameter in positional and str(positional.index(parameter)) in handed)):
            return None  # no file of the project hands this parameter an object of a class whose call backpropagates
        callers = index.callers(str(self.importer), function.name.value)
        if not callers:
            return None
        classes: Set[Tuple[str, str]] = set()
        for path, call in callers:
            self.used.add(path)
            argument = dict(call.keywords).get(parameter)
            if argument is None and parameter in positional and positional.index(parameter) < len(call.positional):
                argument = call.positional[positional.index(parameter)]
            if argument is None:
                return None  # not passed (the default), or passed through `*args`/`**kwargs`: unknown
            summary = file_summary(path)
            if summary is None:
                return None
            values: List[Optional[str]] = [argument.built] if argument.built is not None else (
                list(summary.values_of(call.scope, argument.name)) if argument.name is not None else [])
            if not values or None in values:
                return None
            for value in values:
                resolved = index.resolve(path, summary, value)
                if resolved is None:
                    return None
                classes.add(resolved)
        if len(classes) != 1:
            return None
        path, name = classes.pop()
        return self.carrier(path, name, method)

    def definition(self, level: int, dotted: str) -> Optional[Tuple[ProjectModule, Definition]]:
        """The function or class an imported name leads to (`names.imported`), in a file of the project;
        None for a name of an installed package or one the file does not define."""
        parts = dotted.split(".")
        for split in range(len(parts) - 1, 0, -1):  # the longest module path that is a file
            path = module_file(self.importer, ".".join(parts[:split]), level, self.lookup)
            if path is None:
                continue
            module = load(path)
            if module is None:
                return None
            found = module.definition(".".join(parts[split:]))
            return (module, found) if found is not None else None
        return None


def load(path: Path) -> Optional[ProjectModule]:
    """The file parsed, or None when it cannot be read or parsed or is too big to be worth it. A file open in
    the editor is read from its open text (`torchlint.project.index.set_open_text`)."""
    absolute = os.path.abspath(str(path))
    if open_text(absolute) is None:
        try:
            absolute = str(path.resolve())
        except (OSError, RuntimeError):
            return None
    stamp = file_stamp(absolute)
    if stamp is None or stamp[0] > _MAX_BYTES:
        return None
    return _load(absolute, stamp[1], stamp[0])


@functools.lru_cache(maxsize=128)
def _load(path: str, mtime_ns: int, size: int) -> Optional[ProjectModule]:
    if mtime_ns < 0:  # an open text
        text = read_text(path)
        if text is None:
            return None
    else:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
    try:
        module = cst.parse_module(text)
    except (cst.ParserSyntaxError, RecursionError):
        return None
    names = ModuleNames(module)
    names.project = ProjectFiles(Path(path))
    return ProjectModule(Path(path), module, names)


def _top_level(statements, name: str) -> Optional[Definition]:
    for statement in statements:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) and statement.name.value == name:
            return statement
    return None
