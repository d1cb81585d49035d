"""The torch versions a project allows, read from what it declares (stdlib only).

A rule whose premise is a fact about the torch that runs the code (TL009: since PyTorch 1.1 the scheduler
steps after the optimizer) asks `TorchPin.below((1, 1))`. The declarations read are those of the linted
file's folder and of each folder above it up to its repository's root (outside a repository, up to the
first folder that declares any dependency):
`requirements*.txt` (`torch==0.4.1`, `torch>=0.4,<1.0`, `torch==1.0.*`, a wheel's URL
`.../torch-0.4.1-cp36-...whl`, `-r other.txt` followed), `setup.py`'s requirement strings,
`pyproject.toml`'s `dependencies` (and Poetry's `torch = "^0.4"`), `environment.yml`
(`pytorch=0.4.1`, and its `pip:` list). The nearest folder that names torch decides; where several of its
files name it, each is one way to install the project and every one must agree. A declaration with an
environment marker (`; python_version < "3.7"`) holds only sometimes and is not read; a requirement
without an upper bound (`torch`, `torch>=0.4`) allows today's torch. Unknown or unpinned: modern.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence, Set, Tuple

Version = Tuple[int, ...]

# (version, inclusive): every allowed version is at most (inclusive) or below (exclusive) it. None: no bound.
Bound = Optional[Tuple[Version, bool]]

_MAX_BYTES = 200_000
# How many folders up a file outside a repository looks for its project's declarations.
_LEVELS = 4
_NAMES = {"torch", "pytorch"}
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$")
_SPECIFIER = re.compile(r"^\s*(===|==|~=|!=|<=|>=|<|>|=)\s*([0-9][0-9A-Za-z.*+!_-]*)\s*$")
_WHEEL = re.compile(r"(?:^|/)torch-([0-9][0-9.]*[0-9])(?:[+%][^-]*)?-[^/]*\.whl\b", re.IGNORECASE)
_RELEASE = re.compile(r"^(?:[0-9]+!)?([0-9]+(?:\.[0-9]+)*)")


@dataclass(frozen=True)
class TorchPin:
    """What a project's declarations allow of torch: each declaration's upper bound (one per file that names
    it, in the nearest folder that does), and the files read for it (found or not, they are what it rests on)."""

    bounds: Tuple[Bound, ...] = ()
    files: Tuple[str, ...] = ()

    def below(self, version: Version) -> bool:
        """Every version the project allows is older than `version`: some declaration names torch, and each
        bounds it below `version`. Unknown or open-ended: False (today's torch may run the code)."""
        if not self.bounds:
            return False
        return all(bound is not None and (_compare(bound[0], version) < 0 if bound[1]
                                          else _compare(bound[0], version) <= 0)
                   for bound in self.bounds)


def torch_pin(path: str, root: Optional[str]) -> TorchPin:
    """The torch a file at `path` runs with, as the folders from its own up to `root` (its repository's root)
    declare it. Without a repository (`root` None: a copy of the code), the walk ends at the first folder that
    declares any dependency (the project's top), or after `_LEVELS` folders. Its `files` are the folders walked
    and the files read: what the answer rests on."""
    folder = os.path.dirname(os.path.abspath(path))
    root = os.path.abspath(root) if root is not None else None
    read: List[str] = []
    for _ in range(_LEVELS if root is None else 16):
        read.append(folder)  # a `requirements.txt` created in it later changes the answer
        found = _declaring_files(folder, _mtime(folder))
        bounds: List[Bound] = []
        for file in found:
            read.append(file)
            stamp = _stamp(file) or (-1, -1)
            found_bounds, included = _file_bounds(file, *stamp)
            if included:  # `-r base.txt`: read again when one of them changed
                found_bounds, included = _file_bounds(file, *stamp, tuple((other, _stamp(other)) for other in included))
                read.extend(included)
            bounds.extend(found_bounds)
        if bounds:
            return TorchPin(tuple(bounds), tuple(read))
        if root is None and found or folder == root or os.path.dirname(folder) == folder \
                or root is not None and not folder.startswith(root):
            break
        folder = os.path.dirname(folder)
    return TorchPin((), tuple(read))


def parse_version(text: str) -> Optional[Version]:
    """The release numbers of a version (`0.4.1` of `0.4.1.post2`, `1.10.1+cu113`, `1!0.4`); None if none."""
    match = _RELEASE.match(text.strip())
    return tuple(int(part) for part in match.group(1).split(".")) if match else None


def requirement_bound(requirement: str) -> Optional[Bound]:
    """The upper bound of one pip requirement that names torch (`torch>=0.4,<1.0` -> ((1, 0), False));
    outer None: it does not name torch (or holds only under a marker), inner None: it has no upper bound."""
    text = requirement.split("#", 1)[0].strip()
    if not text or ";" in text:
        return None  # a marker: it holds only sometimes
    if "@" in text:  # `torch @ https://.../torch-0.4.1-...whl`
        name, _, url = text.partition("@")
        if name.strip().lower() != "torch":
            return None
        wheel = _WHEEL.search(url.strip())
        return _pinned(wheel.group(1)) if wheel else None
    wheel = _WHEEL.search(text)
    if wheel and ("/" in text or text.lower().startswith("torch-")):
        return _pinned(wheel.group(1))
    match = _REQUIREMENT.match(text)
    if match is None or match.group(1).lower() not in _NAMES:
        return None
    return _specifiers_bound(match.group(3), conda=False)


def conda_bound(spec: str) -> Optional[Bound]:
    """The upper bound of a conda dependency that names torch (`pytorch=0.4.1`, `pytorch=0.2.0=py36_cu80`,
    `pytorch::pytorch>=1.0,<1.1`); conda's single `=` matches a prefix (`=0.4` is `0.4.*`)."""
    text = spec.split("#", 1)[0].strip()
    text = text.split("::", 1)[-1]
    match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*)$", text)
    if match is None or match.group(1).lower() not in _NAMES:
        return None
    rest = match.group(2).strip()
    if rest.startswith("=") and not rest.startswith("=="):
        rest = rest[1:].split("=", 1)[0]  # drop the build string
        version = parse_version(rest.rstrip(".*"))
        return (_bump(version), False) if version else None
    rest = re.split(r"\s", rest, 1)[0] if rest else rest
    return _specifiers_bound(rest, conda=True)


def _specifiers_bound(specifiers: str, conda: bool) -> Optional[Bound]:
    """The tightest upper bound of `==1.0.*,>=0.4,<1.1`-style specifiers; unreadable ones bound nothing."""
    best: Bound = None
    for part in specifiers.split(","):
        if not part.strip():
            continue
        match = _SPECIFIER.match(part)
        if match is None:
            continue
        operator, value = match.groups()
        wildcard = value.endswith(".*")
        version = parse_version(value[:-2] if wildcard else value)
        if version is None:
            continue
        bound: Bound = None
        if operator in ("==", "===") and not wildcard:
            bound = (version, True)
        elif operator in ("==", "=") and wildcard or operator == "=" and conda:
            bound = (_bump(version), False)
        elif operator == "<":
            bound = (version, False)
        elif operator == "<=":
            bound = (version, True)
        elif operator == "~=" and len(version) > 1:
            bound = (_bump(version[:-1]), False)
        if bound is not None and (best is None or _tighter(bound, best)):
            best = bound
    return best


def _pinned(text: str) -> Bound:
    version = parse_version(text)
    return (version, True) if version else None


def _bump(version: Version) -> Version:
    """The first version after every one that starts with `version` (`0.4` -> `0.5`)."""
    return version[:-1] + (version[-1] + 1,)


def _compare(a: Version, b: Version) -> int:
    width = max(len(a), len(b))
    a, b = a + (0,) * (width - len(a)), b + (0,) * (width - len(b))
    return (a > b) - (a < b)


def _tighter(a: Tuple[Version, bool], b: Tuple[Version, bool]) -> bool:
    order = _compare(a[0], b[0])
    return order < 0 or (order == 0 and not a[1] and b[1])


# --- the files ------------------------------------------------------------------------------------


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return -1


def _stamp(path: str) -> Optional[Tuple[int, int]]:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_size, found.st_mtime_ns


@functools.lru_cache(maxsize=256)
def _declaring_files(folder: str, mtime_ns: int) -> Tuple[str, ...]:
    """The files of `folder` that may declare the project's dependencies (kept while the folder is unchanged)."""
    del mtime_ns  # the key: a file created or deleted in the folder changes it
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return ()
    return tuple(os.path.join(folder, name) for name in names
                 if (name.lower().startswith("requirements") and name.lower().endswith(".txt"))
                 or name in ("setup.py", "pyproject.toml", "environment.yml", "environment.yaml"))


@functools.lru_cache(maxsize=256)
def _file_bounds(path: str, size: int, mtime_ns: int, included_stamps: tuple = ()
                 ) -> Tuple[Tuple[Bound, ...], Tuple[str, ...]]:
    """One bound per file that names torch (`()` when it does not): the tightest of its declarations; and the
    files it includes (`-r base.txt`), whose stamps key the answer once known (`included_stamps`)."""
    del mtime_ns, included_stamps  # the key
    if size < 0 or size > _MAX_BYTES:
        return (), ()
    seen: Set[str] = set()
    bounds = list(_declarations(path, seen))
    included = tuple(sorted(seen - {path}))
    if not bounds:
        return (), included
    tightest: Bound = None
    for bound in bounds:  # one file's lines all hold at once: pip installs what meets each
        if bound is not None and (tightest is None or _tighter(bound, tightest)):
            tightest = bound
    return (tightest,), included


def _declarations(path: str, seen: Set[str]) -> Iterable[Bound]:
    """The bounds of each declaration of torch in the file (a requirements file's `-r` followed)."""
    if path in seen or len(seen) > 8:
        return
    seen.add(path)
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            text = stream.read(_MAX_BYTES)
    except OSError:
        return
    name = os.path.basename(path)
    if name == "setup.py":
        yield from _strings_bounds(text)
    elif name == "pyproject.toml":
        yield from _pyproject_bounds(text)
    elif name.startswith("environment"):
        for line in text.splitlines():
            item = re.match(r"^\s*-\s*(.+)$", line)
            if item is None:
                continue
            value = item.group(1).strip().strip("'\"").split("::", 1)[-1]  # `pytorch::pytorch==1.0`
            bound = requirement_bound(value) if re.search(r"[<>~!]=?|==", value) else conda_bound(value)
            if bound is not None or _names_torch(value):
                yield bound
    else:
        for line in text.splitlines():
            stripped = line.split("#", 1)[0].strip()
            if stripped.startswith(("-r ", "-c ", "--requirement ", "--constraint ")):
                other = os.path.join(os.path.dirname(path), stripped.split(None, 1)[1].strip())
                yield from _declarations(os.path.normpath(other), seen)
                continue
            bound = requirement_bound(stripped)
            if bound is not None or _names_torch(stripped):
                yield bound


def _names_torch(requirement: str) -> bool:
    """An unmarked requirement of torch with no upper bound (`torch`, `torch>=0.4`, `pytorch`)."""
    text = requirement.split("#", 1)[0].strip().split("::", 1)[-1]
    if ";" in text:
        return False
    match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)", text)
    return match is not None and match.group(1).lower() in _NAMES


def _strings_bounds(text: str) -> Iterable[Bound]:
    """setup.py: each string that is a requirement of torch (`install_requires=["torch>=0.4,<1.0"]`)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 200:
            bound = requirement_bound(node.value)
            if bound is not None or (_names_torch(node.value) and node.value.strip().lower() != "pytorch"):
                yield bound


def _pyproject_bounds(text: str) -> Iterable[Bound]:
    """pyproject.toml: `[project] dependencies` (and optional ones), Poetry's `torch = "^0.4"`."""
    try:
        import tomllib
    except ImportError:  # Python before 3.11: the file is not read
        return
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return
    project = data.get("project") if isinstance(data.get("project"), dict) else {}
    requirements: List[str] = [item for item in project.get("dependencies", []) if isinstance(item, str)]
    optional = project.get("optional-dependencies", {})
    if isinstance(optional, dict):
        requirements += [item for group in optional.values() if isinstance(group, list)
                         for item in group if isinstance(item, str)]
    for requirement in requirements:
        bound = requirement_bound(requirement)
        if bound is not None or _names_torch(requirement):
            yield bound
    poetry = data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), dict) else {}
    for group in _poetry_tables(poetry):
        for name, value in group.items():
            if name.lower() != "torch":
                continue
            if isinstance(value, dict):
                value = value.get("version", "*")
            yield _poetry_bound(value) if isinstance(value, str) else None


def _poetry_tables(poetry) -> Sequence[dict]:
    if not isinstance(poetry, dict):
        return ()
    tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
    groups = poetry.get("group")
    if isinstance(groups, dict):
        tables += [group.get("dependencies") for group in groups.values() if isinstance(group, dict)]
    return [table for table in tables if isinstance(table, dict)]


def _poetry_bound(value: str) -> Bound:
    """Poetry's constraints: `^0.4.1` (< 0.5), `~0.4` (< 0.5), `0.4.1` (exactly), or pip's specifiers."""
    value = value.strip()
    if value.startswith("^"):
        version = parse_version(value[1:])
        if version is None:
            return None
        first = next((i for i, part in enumerate(version) if part), len(version) - 1)
        return _bump(version[:first + 1]), False
    if value.startswith("~") and not value.startswith("~="):
        version = parse_version(value[1:])
        if version is None:
            return None
        return _bump(version[:2] if len(version) > 1 else version), False
    if parse_version(value) is not None and re.fullmatch(r"[0-9][0-9.]*", value):
        return parse_version(value), True
    return _specifiers_bound(value, conda=False)
