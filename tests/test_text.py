"""Lines as Python counts them: only `\\n`, `\\r\\n` and `\\r` end one (LibCST's positions agree)."""

from __future__ import annotations

import pytest

from torchlint.text import split_lines


@pytest.mark.parametrize("text, lines", [
    ("", []),
    ("x = 1", ["x = 1"]),
    ("x = 1\n", ["x = 1\n"]),
    ("a\n\nb", ["a\n", "\n", "b"]),
    ("a\r\nb\r\n", ["a\r\n", "b\r\n"]),
    ("a\rb\n", ["a\r", "b\n"]),
    # what `str.splitlines` also breaks at stays inside a line
    ("a = 1\x0cb = 2\n", ["a = 1\x0cb = 2\n"]),
    ("s = 'x\u2028y'\nz = 1\n", ["s = 'x\u2028y'\n", "z = 1\n"]),
    ("s = '\x1c\x1d\x1e\x85\x0b'\n", ["s = '\x1c\x1d\x1e\x85\x0b'\n"]),
])
def test_lines_end_only_where_python_ends_them(text, lines):
    assert split_lines(text) == lines
    assert "".join(split_lines(text)) == text
