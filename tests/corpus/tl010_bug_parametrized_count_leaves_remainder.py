"""One of the counts pytest runs this test with (3) does not divide the 100 micro-batches: with it the last
micro-batch's gradients are left in `.grad`, never applied."""
import pytest
import torch
from torch import nn


@pytest.mark.parametrize("accumulation_steps", [1, pytest.param(3, id="three"), 4])
def test_accumulated_training_converges(accumulation_steps):
    torch.manual_seed(0)
    model = nn.Linear(10, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs, targets = torch.randn(10, 10), torch.randint(0, 2, (10,))
    for batch_idx in range(100):
        loss = nn.functional.cross_entropy(model(inputs), targets) / accumulation_steps
        loss.backward()
        if (batch_idx + 1) % accumulation_steps == 0:  # expect: TL010
            optimizer.step()
            optimizer.zero_grad()
