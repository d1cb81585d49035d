"""Project configuration: `[tool.torchlint]` in `pyproject.toml`, or a `torchlint.toml`.

The configuration file nearest to each linted file wins (a `torchlint.toml`
before a `pyproject.toml` in the same folder; a `pyproject.toml` without a
`[tool.torchlint]` table is passed over). Command-line options override it:
`--select` replaces the configured selection, `--ignore` and
`--extend-select` add to it. An unknown key, a wrong type or an unknown rule
is an error naming the file and the key, never silently ignored.

```toml
[tool.torchlint]
select = ["TL"]                 # codes, prefixes or names; default: every rule
ignore = ["TL010"]
extend-select = []
exclude = ["legacy/"]           # replaces the built-in folder excludes (.venv, build, ...)
extend-exclude = ["scratch_*.py"]
respect-gitignore = true
[tool.torchlint.per-file-ignores]
"tests/*" = ["TL002"]
```
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from torchlint.discover import DEFAULT_EXCLUDES

KEYS = ("select", "ignore", "extend-select", "exclude", "extend-exclude", "per-file-ignores", "respect-gitignore")
CONFIG_NAMES = ("torchlint.toml", "pyproject.toml")


class ConfigError(Exception):
    """A configuration problem; the message names the file (and the key or line)."""


@dataclass(frozen=True)
class Overrides:
    """What the command line says, applied on top of every configuration file."""

    select: Optional[Tuple[str, ...]] = None
    ignore: Tuple[str, ...] = ()
    extend_select: Tuple[str, ...] = ()
    respect_gitignore: Optional[bool] = None


@dataclass(frozen=True)
class Settings:
    path: Optional[Path]  # the configuration file, None for the defaults
    root: Path  # patterns are relative to this folder
    select: Optional[Tuple[str, ...]] = None
    ignore: Tuple[str, ...] = ()
    extend_select: Tuple[str, ...] = ()
    exclude: Optional[Tuple[str, ...]] = None
    extend_exclude: Tuple[str, ...] = ()
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    respect_gitignore: bool = True
    _specs: Dict = field(default_factory=dict, compare=False, repr=False)

    def rules_for(self, path: Path, overrides: Overrides = Overrides()) -> tuple:
        """The rule classes that run on `path` (imports the rules, and LibCST with them)."""
        from torchlint.rules import rules_by_codes

        return rules_by_codes(self.codes_for(path, overrides))

    def codes_for(self, path: Path, overrides: Overrides = Overrides()) -> Tuple[str, ...]:
        """The codes of the rules that run on `path`, after per-file-ignores and the command line."""
        from torchlint.registry import select_codes

        select = overrides.select if overrides.select is not None else self.select
        ignore = list(self.ignore) + list(overrides.ignore)
        for pattern, codes in self.per_file_ignores:
            if self._matches(pattern, path, is_dir=False):
                ignore.extend(codes)
        return select_codes(select, ignore, tuple(self.extend_select) + tuple(overrides.extend_select))

    def is_excluded(self, path: Path, is_dir: bool) -> bool:
        if self.exclude is None:
            if is_dir and path.name in DEFAULT_EXCLUDES:
                return True
        elif any(self._matches(pattern, path, is_dir) for pattern in self.exclude):
            return True
        return any(self._matches(pattern, path, is_dir) for pattern in self.extend_exclude)

    def _matches(self, pattern: str, path: Path, is_dir: bool) -> bool:
        spec = self._specs.get(pattern)
        if spec is None:
            import pathspec

            spec = pathspec.PathSpec.from_lines("gitwildmatch", [pattern])
            self._specs[pattern] = spec
        try:
            relative = path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            relative = path.name
        return spec.match_file(relative + "/" if is_dir else relative)


def _line_count(path: Path) -> int:
    try:
        data = path.read_bytes()
    except OSError:
        return 0
    return data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)


def _load_toml(path: Path) -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python < 3.11 only
        import tomli as tomllib
    try:
        with open(path, "rb") as stream:
            return tomllib.load(stream)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        if message.endswith("(at end of document)"):  # say where that is
            lines = _line_count(path)
            message = message.replace("(at end of document)", f"(at line {lines}, the end of the file)")
        raise ConfigError(f"{path}: invalid TOML: {message}") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read ({error.strerror or error})") from None


def _table(path: Path) -> Optional[dict]:
    """The torchlint table of a configuration file, or None when it has none."""
    data = _load_toml(path)
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        return tool.get("torchlint") if isinstance(tool, dict) else None
    return data  # torchlint.toml: the keys sit at the top level


def load_settings(path: Path) -> Settings:
    table = _table(path)
    if table is None:
        raise ConfigError(f"{path}: no [tool.torchlint] table")
    where = "[tool.torchlint]" if path.name == "pyproject.toml" else "torchlint.toml"
    for key in table:
        if key not in KEYS:
            known = ", ".join(KEYS)
            raise ConfigError(f"{path}: unknown key `{key}` in {where} (known keys: {known})")

    def strings(key: str) -> Optional[Tuple[str, ...]]:
        value = table.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ConfigError(f"{path}: `{key}` must be a list of strings")
        return tuple(value)

    def rule_list(key: str) -> Optional[Tuple[str, ...]]:
        value = strings(key)
        _check_rules(path, key, value or ())
        return value

    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(f"{path}: `per-file-ignores` must be a table of pattern = [codes]")
    per_file_ignores: List[Tuple[str, Tuple[str, ...]]] = []
    for pattern, codes in per_file.items():
        if not isinstance(codes, list) or not all(isinstance(code, str) for code in codes):
            raise ConfigError(f"{path}: `per-file-ignores.\"{pattern}\"` must be a list of strings")
        _check_rules(path, f'per-file-ignores."{pattern}"', codes)
        per_file_ignores.append((pattern, tuple(codes)))
    respect = table.get("respect-gitignore", True)
    if not isinstance(respect, bool):
        raise ConfigError(f"{path}: `respect-gitignore` must be true or false")
    return Settings(
        path=path,
        root=path.parent,
        select=rule_list("select"),
        ignore=rule_list("ignore") or (),
        extend_select=rule_list("extend-select") or (),
        exclude=strings("exclude"),
        extend_exclude=strings("extend-exclude") or (),
        per_file_ignores=tuple(per_file_ignores),
        respect_gitignore=respect,
    )


def _check_rules(path: Path, key: str, selectors: Sequence[str]) -> None:
    from torchlint.registry import check_selectors

    try:
        check_selectors(selectors)
    except ValueError as error:
        raise ConfigError(f"{path}: {error} in `{key}`") from None


class SettingsResolver:
    """Finds and caches the settings that apply in each folder."""

    def __init__(self, config_file: Optional[Path] = None) -> None:
        self._by_folder: Dict[Path, Settings] = {}
        self._by_parent: Dict[Path, Settings] = {}  # by the folder as spelled: no resolve() per file
        self._forced = load_settings(config_file) if config_file is not None else None

    def for_path(self, path: Path) -> Settings:
        folder = path if path.is_dir() else path.parent
        return self.for_folder(folder.resolve())

    def for_entry(self, path: Path) -> Settings:
        """The settings of the folder holding `path` (a file or folder found by a walk)."""
        settings = self._by_parent.get(path.parent)
        if settings is None:
            settings = self._by_parent[path.parent] = self.for_folder(path.parent.resolve())
        return settings

    def for_folder(self, folder: Path) -> Settings:
        if self._forced is not None:
            return self._forced
        cached = self._by_folder.get(folder)
        if cached is not None:
            return cached
        settings = None
        for name in CONFIG_NAMES:
            candidate = folder / name
            if candidate.is_file() and _table(candidate) is not None:
                settings = load_settings(candidate)
                break
        if settings is None:
            parent = folder.parent
            settings = self.for_folder(parent) if parent != folder else Settings(path=None, root=Path.cwd())
        self._by_folder[folder] = settings
        return settings
