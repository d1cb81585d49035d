"""A test hands its worker to a launcher and calls what it returns with each count pytest lists: 1 and 3,
and 3 does not divide the 100 micro-batches."""
import pytest
import torch
from torch import nn


def init_distributed(dp: int):
    def launcher(worker):
        def run(**kwargs):
            return worker(None, **kwargs)
        return run
    return launcher


@pytest.mark.parametrize("accumulation_steps", [1, 3])
def test_accumulation(accumulation_steps):
    init_distributed(dp=2)(_run_accumulation)(accumulation_steps=accumulation_steps)


def _run_accumulation(context, accumulation_steps):
    model = nn.Linear(10, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs, targets = torch.randn(10, 10), torch.randint(0, 2, (10,))
    for batch_idx in range(100):
        loss = nn.functional.cross_entropy(model(inputs), targets) / accumulation_steps
        loss.backward()
        if (batch_idx + 1) % accumulation_steps == 0:  # expect: TL010
            optimizer.step()
            optimizer.zero_grad()
