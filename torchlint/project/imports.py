"""Which file of the project an import names, found the way Python would find it from the importing file.

A relative import (`from .loss import ComputeLoss`, level 1) is looked for from the importer's package; an
absolute one (`from utils.loss import ComputeLoss`, `import open_instruct.rl_utils`) from the importer's
folder or a folder above it (a script beside its modules, a package under the project's root), or from the
`src/` folder beside one of those when it holds the package (`from deepke.models import Ner` in
`example/ner/run.py`, for `src/deepke/__init__.py`: the project's package installed from a `src/` layout), up
to the repository's root (the folder holding `.git`) and never more than a few levels. `name.py` and
`name/__init__.py` count; anything else (an installed package, a compiled module) is not the project's.

Standard library only: the main process checks the files a cache entry rests on (`file_stamps`) without
importing LibCST.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Dict, List, Optional, Tuple

# How many folders above the importer an absolute import is looked for, at most.
_SEARCH_LEVELS = 6


class Lookup:
    """What the file system says, asked once per path and per (folder, module): the lookups of one file's facts
    ask the same candidates again and again. Made afresh for each file (a long-lived process keeps none)."""

    def __init__(self) -> None:
        self._stats: Dict[str, Optional[Tuple[int, int]]] = {}
        self.modules: Dict[Tuple[str, str, int], Optional[str]] = {}  # (importer's folder, module, level) -> file

    def stat(self, path: str) -> Optional[Tuple[int, int]]:
        """(size, modification time) of a file; None when there is no such file."""
        if path not in self._stats:
            try:
                found = os.stat(path)
                self._stats[path] = (found.st_size, found.st_mtime_ns) if stat.S_ISREG(found.st_mode) else None
            except OSError:
                self._stats[path] = None
        return self._stats[path]

    def exists(self, path: str) -> bool:
        if path not in self._stats:
            self._stats[path] = (0, 0) if os.path.exists(path) else None
        return self._stats[path] is not None


def module_file(importer: Path, module: str, level: int = 0, lookup: Optional[Lookup] = None) -> Optional[Path]:
    """The file `module` names when imported from `importer` (`level` leading dots), if it is the project's."""
    found = _module_file(os.path.abspath(importer), module, level, lookup or Lookup())
    return Path(found) if found is not None else None


def _module_file(importer: str, module: str, level: int, lookup: Lookup) -> Optional[str]:
    key = (os.path.dirname(importer), module, level)
    if key not in lookup.modules:
        lookup.modules[key] = _find_module(key[0], module, level, lookup)
    return lookup.modules[key]


def _find_module(base: str, module: str, level: int, lookup: Lookup) -> Optional[str]:
    parts = [part for part in module.split(".") if part]
    if level:
        for _ in range(level - 1):
            base = os.path.dirname(base)
        return _module_at(base, parts, lookup)
    if not parts:
        return None
    for _ in range(_SEARCH_LEVELS):
        found = _module_at(base, parts, lookup)
        if found is None and lookup.stat(os.path.join(base, "src", parts[0], "__init__.py")) is not None:
            found = _module_at(os.path.join(base, "src"), parts, lookup)  # the project's package, `src/` layout
        if found is not None:
            return found
        parent = os.path.dirname(base)
        if lookup.exists(os.path.join(base, ".git")) or parent == base:
            return None
        base = parent
    return None


def _module_at(base: str, parts: List[str], lookup: Lookup) -> Optional[str]:
    if not parts:
        candidate = os.path.join(base, "__init__.py")
        return candidate if lookup.stat(candidate) is not None else None
    folder = os.path.join(base, *parts[:-1])
    for candidate in (os.path.join(folder, parts[-1] + ".py"), os.path.join(folder, parts[-1], "__init__.py")):
        if lookup.stat(candidate) is not None:
            return candidate
    return None


def file_stamps(paths) -> Tuple[Tuple[str, int, int], ...]:
    """(path, size, modification time) of each file: what a cache entry resting on them checks again."""
    stamps = []
    for path in paths:
        try:
            found = os.stat(path)
        except OSError:
            continue
        stamps.append((path, found.st_size, found.st_mtime_ns))
    return tuple(stamps)
