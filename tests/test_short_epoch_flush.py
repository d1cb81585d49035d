"""A last-batch test or a flush that only runs in an epoch no longer than one accumulation window is no flush
of a longer epoch's last partial window (TL010), however the epoch's length is spelled."""

from __future__ import annotations

from typing import List

import pytest

from torchlint.engine import lint_source
from torchlint.rules import ALL_RULES

_LOOP = """
import torch
from torch import nn


def train(model, loader, accum, epochs, budget, sized):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()
    {before}
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            (criterion(model(x), y) / accum).backward()
            if (i + 1) % accum == 0 or {last}:
                optimizer.step()
                optimizer.zero_grad()
"""

_FLUSH = """
import torch
from torch import nn


def train(model, loader, accum, epochs, budget):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()
    {before}
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            (criterion(model(x), y) / accum).backward()
            if (i + 1) % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
        if {test}:
            optimizer.step()
            optimizer.zero_grad()
"""


def _lines(source: str) -> List[int]:
    diagnostics, problems = lint_source(source, "train.py", ALL_RULES)
    assert not problems
    return [d.line for d in diagnostics if d.code == "TL010"]


@pytest.mark.parametrize("before, last", [
    ("n = len(loader)", "(n <= accum and i + 1 == n)"),
    ("n = len(loader)", "(accum >= n and n == 1 + i)"),
    ("n = len(loader)", "((i + 1) == n and n < accum)"),
    ("n = len(loader) if sized else budget", "(n <= accum and (i + 1) == n)"),
    ("pass", "(budget <= accum and i + 1 == budget)"),
    ("pass", "(len(loader) <= accum and i + 1 == len(loader))"),
    ("n = len(loader)", "(n <= accum and i == n - 1)"),
])
def test_a_last_batch_test_that_holds_only_in_the_first_window_leaves_the_partial_window(before: str,
                                                                                        last: str) -> None:
    assert _lines(_LOOP.format(before=before, last=last)) == [13]


@pytest.mark.parametrize("before, last", [
    ("n = len(loader)", "i + 1 == n"),
    ("n = len(loader)", "(n <= accum or i + 1 == n)"),
    ("n = len(loader)", "(n <= accum and i + 1 == n) or i + 1 == n"),
    ("n = len(loader)", "(sized and i + 1 == n)"),
])
def test_a_last_batch_test_that_holds_in_a_long_epoch_is_a_flush(before: str, last: str) -> None:
    assert _lines(_LOOP.format(before=before, last=last)) == []


@pytest.mark.parametrize("before, test", [
    ("n = len(loader)", "n <= accum"),
    ("n = len(loader)", "accum > n"),
    ("pass", "len(loader) <= accum"),
])
def test_a_flush_only_for_an_epoch_of_one_window_leaves_a_longer_epochs_partial_window(before: str,
                                                                                       test: str) -> None:
    assert _lines(_FLUSH.format(before=before, test=test)) == [13]


@pytest.mark.parametrize("before, test", [
    ("pass", "budget <= accum"),  # nothing says `budget` is the epoch's length
    ("n = len(loader) if budget else 0", "n <= accum"),
    ("n = len(loader)", "n > 0"),
])
def test_a_flush_not_known_to_run_only_in_short_epochs_counts(before: str, test: str) -> None:
    assert _lines(_FLUSH.format(before=before, test=test)) == []
