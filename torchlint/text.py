"""Line handling that agrees with the Python tokenizer (and so with LibCST's positions).

`str.splitlines` also breaks on form feeds, `\\x1c`-`\\x1e`, `\\x85` and the Unicode
line separators; Python source lines end only at `\\n`, `\\r\\n` or `\\r`.
"""

from __future__ import annotations

import re
from typing import List

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> List[str]:
    """The lines of `text`, each with its line break, as Python counts them."""
    return _LINE.findall(text)
