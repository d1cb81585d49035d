"""Which file of the project an import names, found the way Python would find it from the importing file.

A relative import (`from .loss import ComputeLoss`, level 1) is looked for from the importer's package; an
absolute one (`from utils.loss import ComputeLoss`, `import open_instruct.rl_utils`) from the importer's
folder or a folder above it (a script beside its modules, a package under the project's root), up to the
repository's root (the folder holding `.git`) and never more than a few levels. `name.py` and
`name/__init__.py` count; anything else (an installed package, a compiled module) is not the project's.

Standard library only: the main process stamps cache keys with it before anything is parsed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, List, Optional

# How many folders above the importer an absolute import is looked for, at most.
_SEARCH_LEVELS = 6
_IMPORT_LINE = re.compile(r"^[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import|import[ \t]+([\w.]+))", re.MULTILINE)


def module_file(importer: Path, module: str, level: int = 0) -> Optional[Path]:
    """The file `module` names when imported from `importer` (`level` leading dots), if it is the project's."""
    parts = [part for part in module.split(".") if part]
    if level:
        base = importer.parent
        for _ in range(level - 1):
            base = base.parent
        return _module_at(base, parts)
    if not parts:
        return None
    for base in _search_bases(importer):
        found = _module_at(base, parts)
        if found is not None:
            return found
    return None


def _search_bases(importer: Path) -> Iterable[Path]:
    base = importer.resolve().parent
    for _ in range(_SEARCH_LEVELS):
        yield base
        if (base / ".git").exists() or base.parent == base:
            return
        base = base.parent


def _module_at(base: Path, parts: List[str]) -> Optional[Path]:
    if not parts:
        candidate = base / "__init__.py"
        return candidate if candidate.is_file() else None
    folder = base.joinpath(*parts[:-1])
    for candidate in (folder / f"{parts[-1]}.py", folder / parts[-1] / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def dependency_stamp(importer: Path, text: str) -> str:
    """What a file's findings may depend on in other files of the project: each project file its imports
    name, with its size and modification time (a cache entry is valid while these stay the same)."""
    stamps = []
    for match in _IMPORT_LINE.finditer(text):
        dots, module, plain = match.groups()
        level = len(dots or "")
        name = module if plain is None else plain
        path = module_file(importer, name or "", level) if (name or level) else None
        if path is None:
            continue
        try:
            stat = path.stat()
        except OSError:
            continue
        stamps.append(f"{path}:{stat.st_size}:{stat.st_mtime_ns}")
    return "\n".join(sorted(set(stamps)))
