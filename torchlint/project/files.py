"""A file of the project read with LibCST when a fact needs it (`imports` says which file an import names).

A module read here is parsed whole once per process and content (path, size, modification time);
what the facts take from it is a function or a class of it and its own names. A file that does not
parse, or is too big to be worth it, is not the project's as far as the facts go.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Set, Tuple, Union

import libcst as cst

from torchlint.names import ModuleNames
from torchlint.project.imports import Lookup, module_file

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
    """The file parsed, or None when it cannot be read or parsed or is too big to be worth it."""
    try:
        stat = path.stat()
    except OSError:
        return None
    if stat.st_size > _MAX_BYTES:
        return None
    return _load(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=128)
def _load(path: str, mtime_ns: int, size: int) -> Optional[ProjectModule]:
    try:
        text = Path(path).read_text(encoding="utf-8")
        module = cst.parse_module(text)
    except (OSError, UnicodeDecodeError, cst.ParserSyntaxError, RecursionError):
        return None
    names = ModuleNames(module)
    names.project = ProjectFiles(Path(path))
    return ProjectModule(Path(path), module, names)


def _top_level(statements, name: str) -> Optional[Definition]:
    for statement in statements:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) and statement.name.value == name:
            return statement
    return None
