"""Python's cyclic garbage collector, paused while one file's syntax trees are built and read.

CPython's `ast` tree of a file, and LibCST's, are hundreds of thousands of objects, nearly none of them
cyclic garbage. A collector left running starts a collection every few hundred objects made, and as a tree
grows its objects reach the oldest generation, which a full collection walks whole: again and again while
the next tree is built. That was a third of the time of a cold run over the torch package. Paused for one
file and run once after it on the objects made since the last collection, the collector frees the same
cycles, and the memory they hold in between is that of one file's analysis.
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No automatic collection inside the block; one collection of the young generations after it. Nested
    blocks, and code that runs with the collector off already, leave it as it was."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect(1)


# The oldest generation's threshold while `young_collections_only` holds: never reached in one run.
_NO_FULL_COLLECTION = 1 << 30


@contextlib.contextmanager
def young_collections_only() -> Iterator[None]:
    """No automatic collection of the oldest generation inside the block; the young ones are collected as ever.

    The process that reads a run's files keeps what it learns of them (texts, summaries, the projects' indexes,
    one result per file): its heap only grows. A full collection starts each time it has grown by a quarter,
    and each one walks all of it, to find next to no garbage (nothing it keeps is cyclic): two dozen of them, a
    fifth of that process's CPU over a folder of many codebases. Cyclic garbage that survives two young
    collections waits for the first full collection after the block."""
    first, second, third = gc.get_threshold()
    gc.set_threshold(first, second, _NO_FULL_COLLECTION)
    try:
        yield
    finally:
        gc.set_threshold(first, second, third)
