"""Find the files to lint: `*.py` and `*.ipynb` under folders, `.gitignore` respected, the usual folders skipped.

Knows nothing of rules. A file named explicitly is always linted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, List, Optional, Sequence, Tuple

DEFAULT_EXCLUDES = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", "build", "dist", "node_modules", "__pycache__", "site-packages",
     ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".torchlint_cache", ".eggs"}
)
SUFFIXES = (".py", ".ipynb")


@dataclass(frozen=True)
class Missing:
    path: str


class _GitIgnore:
    """The `.gitignore` files that apply inside one folder tree, each relative to its own folder."""

    def __init__(self, specs: Tuple[Tuple[Path, object], ...] = ()) -> None:
        self.specs = specs

    def with_folder(self, folder: Path) -> "_GitIgnore":
        spec = _load_spec(folder / ".gitignore")
        return _GitIgnore(self.specs + ((folder, spec),)) if spec is not None else self

    def ignored(self, path: Path, is_dir: bool) -> bool:
        for base, spec in self.specs:
            try:
                relative = path.relative_to(base).as_posix()
            except ValueError:
                continue
            if spec.match_file(relative + "/" if is_dir else relative):
                return True
        return False


def _load_spec(file: Path):
    try:
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    import pathspec

    return pathspec.PathSpec.from_lines("gitwildmatch", text.splitlines())


def _ancestors_gitignore(folder: Path) -> _GitIgnore:
    """`.gitignore` files from the repository root down to `folder`'s parent."""
    chain: List[Path] = []
    for parent in folder.parents:
        chain.append(parent)
        if (parent / ".git").exists():
            break
    else:
        chain = []
    ignore = _GitIgnore()
    for parent in reversed(chain):
        ignore = ignore.with_folder(parent)
    return ignore


Excluded = Callable[[Path, bool], bool]


def _default_excluded(path: Path, is_dir: bool) -> bool:
    return is_dir and path.name in DEFAULT_EXCLUDES


def discover(
    paths: Sequence[str], respect_gitignore: bool = True, excluded: Excluded = _default_excluded
) -> Iterator[object]:
    """Yield `Path`s to lint, in a stable order, or `Missing` for a path that does not exist.

    `excluded(path, is_dir)` decides what the walk skips (the configuration's
    excludes); a file named explicitly is always linted.
    """
    seen = set()
    for raw in paths:
        path = Path(raw)
        if not os.path.lexists(path):
            yield Missing(raw)
            continue
        if not path.is_dir():
            if path not in seen:
                seen.add(path)
                yield path
            continue
        start = path.resolve()
        ignore = _ancestors_gitignore(start) if respect_gitignore else _GitIgnore()
        for found in _walk(path, ignore, respect_gitignore, excluded, set()):
            if found not in seen:
                seen.add(found)
                yield found


def _walk(folder: Path, ignore: _GitIgnore, respect_gitignore: bool, excluded: Excluded, visited: set) -> Iterator[Path]:
    try:
        status = os.stat(folder)  # one call, where resolving the path asks every folder above it
    except OSError:
        return
    if (status.st_dev, status.st_ino) in visited:  # a symlink loop, or a second link to a folder walked
        return
    visited.add((status.st_dev, status.st_ino))
    real = folder
    if respect_gitignore:
        try:
            real = folder.resolve()
        except (OSError, RuntimeError):
            return
        ignore = ignore.with_folder(real)
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        path = Path(entry.path)
        try:
            is_dir = entry.is_dir()
        except OSError:  # a symlink to itself: reading it will say why it cannot be read
            is_dir = False
        if not is_dir and not entry.name.endswith(SUFFIXES):
            continue  # never linted: not worth asking the excludes and the `.gitignore` files about
        if excluded(path, is_dir):
            continue
        if respect_gitignore and ignore.ignored(real / entry.name, is_dir):
            continue
        if is_dir:
            yield from _walk(path, ignore, respect_gitignore, excluded, visited)
        else:
            yield path


def display_path(path: Path, root: Optional[Path] = None) -> str:
    root = root or Path.cwd()
    try:
        return str(path.resolve().relative_to(root.resolve())) if path.is_absolute() else str(path)
    except ValueError:
        return str(path)
