"""The results cache: an unchanged file is never analysed twice.

One JSON file per torchlint build in `.torchlint_cache/` (or `--cache-dir`,
or `$TORCHLINT_CACHE_DIR`). An entry is keyed by a hash of the program text,
its kind (`.py` or notebook) and the codes of the rules that ran on it; the
file name carries the build: torchlint's version, the Python version and a
fingerprint of torchlint's own sources, so editing a rule in a development
install never serves stale findings. Only clean analyses are stored: a run
that met an internal error is redone next time, so the error is seen again.

Reading the cache needs neither LibCST nor the rules, so a run where every
file hits starts and ends in a fraction of a second. A cache that cannot be
read is treated as empty; one that cannot be written is skipped in silence
(linting must never fail because of its cache).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from torchlint import __version__
from torchlint.model import Diagnostic

CACHE_DIR_NAME = ".torchlint_cache"
CACHE_DIR_ENV = "TORCHLINT_CACHE_DIR"
# Entries no run has used for this long are dropped when the cache is written.
MAX_AGE_SECONDS = 30 * 24 * 3600
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This folder is a cache made by torchlint.\n"


def default_directory(explicit: Optional[str] = None) -> Path:
    chosen = explicit or os.environ.get(CACHE_DIR_ENV)
    return Path(chosen) if chosen else Path.cwd() / CACHE_DIR_NAME


def build_fingerprint() -> str:
    """Version, Python version, and the size and mtime of every torchlint source file."""
    package = Path(__file__).resolve().parent
    digest = hashlib.blake2b(digest_size=8)
    digest.update(f"{__version__}|{sys.version_info[0]}.{sys.version_info[1]}".encode())
    for path in sorted(package.rglob("*.py")):
        try:
            status = path.stat()
        except OSError:
            continue
        digest.update(f"|{path.relative_to(package).as_posix()}:{status.st_size}:{status.st_mtime_ns}".encode())
    return f"{__version__}-{digest.hexdigest()}"


class Cache:
    """Findings per program text, loaded on first use and written back by `save()`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.file = directory / f"results-{build_fingerprint()}.json"
        self._entries: Optional[Dict[str, list]] = None
        self._dirty = False
        self._now = int(time.time())
        self._projects: Dict[str, int] = {}  # project root -> its stamp, read once per run

    @staticmethod
    def key(text: str, kind: str, codes: Sequence[str]) -> str:
        digest = hashlib.blake2b(digest_size=16)
        digest.update(f"{kind}\0{','.join(codes)}\0".encode())
        digest.update(text.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def _load(self) -> Dict[str, list]:
        if self._entries is None:
            try:
                with open(self.file, encoding="utf-8") as stream:
                    loaded = json.load(stream)
                self._entries = loaded if isinstance(loaded, dict) else {}
            except (OSError, ValueError):
                self._entries = {}
        return self._entries

    def is_empty(self) -> bool:
        """No findings stored for this build of torchlint: every file will be analysed."""
        return not self._load()

    def get(self, key: str, path: str) -> Optional[List[Diagnostic]]:
        """The cached findings for `key`, reported under `path`; None on a miss."""
        entry = self._load().get(key)
        if not isinstance(entry, list) or len(entry) not in (2, 3):
            return None
        used, found = entry[:2]
        if len(entry) == 3 and not _unchanged(entry[2], self._project):
            return None  # another file of the project the findings rest on has changed since
        try:
            diagnostics = [Diagnostic.from_json(item, path) for item in found]
        except (KeyError, TypeError, ValueError):
            return None
        if self._now - used > 24 * 3600:  # refresh the date at most once a day: warm runs stay read-only
            entry[0] = self._now
            self._dirty = True
        return diagnostics

    def put(self, key: str, diagnostics: Sequence[Diagnostic],
            dependencies: Sequence[Tuple[str, int, int]] = ()) -> None:
        """`dependencies`: the other files of the project the findings rest on, (path, size, modification
        time) when they were read, and the projects whose index they consulted (`project_stamp`): the entry
        holds while each is unchanged."""
        entry = [self._now, [d.to_json() for d in diagnostics]]
        if dependencies:
            entry.append([[path, size, self._project(path) if size == -1 else mtime_ns]
                          for path, size, mtime_ns in dependencies])
        self._load()[key] = entry
        self._dirty = True

    def _project(self, root: str) -> int:
        """The stamp of the project at `root` (`torchlint.project.index.project_stamp`), made once per run."""
        if root not in self._projects:
            from torchlint.project.index import project_stamp

            self._projects[root] = project_stamp(root.rstrip(os.sep) or os.sep)[2]
        return self._projects[root]

    def save(self) -> None:
        """Write the entries back atomically (dropping stale ones); errors are ignored."""
        if not self._dirty or self._entries is None:
            return
        entries = {key: entry for key, entry in self._entries.items()
                   if isinstance(entry, list) and entry and self._now - entry[0] <= MAX_AGE_SECONDS}
        try:
            self._prepare_directory()
            import tempfile  # only a run that found something new writes

            handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".results-", suffix=".tmp")
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as stream:
                    json.dump(entries, stream, separators=(",", ":"))
                os.replace(temporary, self.file)
            except BaseException:
                _remove(Path(temporary))
                raise
        except OSError:
            return
        self._dirty = False

    def _prepare_directory(self) -> None:
        fresh = not self.directory.exists()
        self.directory.mkdir(parents=True, exist_ok=True)
        if fresh:
            (self.directory / ".gitignore").write_text("# Made by torchlint.\n*\n", encoding="utf-8")
            (self.directory / "CACHEDIR.TAG").write_text(_TAG, encoding="utf-8")
        for old in self.directory.glob("results-*.json"):
            if old != self.file:  # another build's results: they can never hit again
                _remove(old)


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def _unchanged(dependencies, project_stamp) -> bool:
    """Every file an entry rests on still has the size and modification time it had; a project it rests on
    (size -1) still has the stamp it had (`project_stamp(root)`)."""
    try:
        for path, size, mtime_ns in dependencies:
            if size == -1:
                if project_stamp(path) != mtime_ns:
                    return False
                continue
            found = os.stat(path)
            if found.st_size != size or found.st_mtime_ns != mtime_ns:
                return False
    except (OSError, TypeError, ValueError):
        return False
    return True

