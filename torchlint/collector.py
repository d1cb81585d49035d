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
