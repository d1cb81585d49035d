"""Line handling that agrees with the Python tokenizer (and so with LibCST's positions).

`str.splitlines` also breaks on form feeds, `\\x1c`-`\\x1e`, `\\x85` and the Unicode
line separators; Python source lines end only at `\\n`, `\\r\\n` or `\\r`.
"""

from __future__ import annotations

import re
from typing import Iterator, List, Tuple

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
# What `str.splitlines` breaks at besides `\n`: a text without any of them splits there as Python counts lines.
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def split_lines(text: str) -> List[str]:
    """The lines of `text`, each with its line break, as Python counts them."""
    if _OTHER_BREAKS.search(text) is None:
        return text.splitlines(True)  # several times faster than the pattern
    return _LINE.findall(text)


def lines_spelling(text: str, word: str) -> Iterator[Tuple[int, int]]:
    """(start, end) of each line of `text` that spells `word`, once a line, in order; `end` is where its `\n` is
    (or the text ends). Found with string searches, which are many times faster on a big text than a regular
    expression tried at every line start."""
    at = text.find(word)
    while at >= 0:
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        yield text.rfind("\n", 0, at) + 1, end
        at = text.find(word, end)


def one_line(code: str) -> str:
    """An expression's code on one line, for a message: one that spans lines (a step condition written over
    several, with comments) is given normalised, its comments dropped."""
    if "\n" not in code:
        return code
    import ast

    try:
        return ast.unparse(ast.parse("(" + code + "\n)", mode="eval"))
    except (SyntaxError, ValueError):
        return " ".join(line.split("#", 1)[0].strip() for line in code.splitlines() if line.split("#", 1)[0].strip())
