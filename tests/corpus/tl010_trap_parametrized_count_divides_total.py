"""A test run by pytest once per accumulation count: 1 and 10 both divide the 100 micro-batches, so the
last micro-batch always closes a window and nothing is left behind."""
import pytest
import torch
from torch import nn


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("accumulation_steps", [1, 10])
def test_accumulated_steps_match(dtype, accumulation_steps):
    torch.manual_seed(0)
    model = nn.Linear(10, 2).to(dtype)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs, targets = torch.randn(10, 10, dtype=dtype), torch.randint(0, 2, (10,))
    for batch_idx in range(100):
        loss = nn.functional.cross_entropy(model(inputs), targets) / accumulation_steps
        loss.backward()
        if (batch_idx + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
    assert all(p.grad is None or not p.grad.any() for p in model.parameters())
