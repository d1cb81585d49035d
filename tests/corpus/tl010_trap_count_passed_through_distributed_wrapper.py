"""A test hands its worker to a launcher and calls what the launcher returns with the count pytest gives it
(`init_distributed(dp=2)(_run)(accumulation_steps=...)`): 1 and 10 both divide the 100 micro-batches, so the
last micro-batch always closes a window."""
import pytest
import torch
from torch import nn


def init_distributed(tp: int, dp: int, pp: int):
    def launcher(worker):
        def run(**kwargs):
            return worker(None, **kwargs)
        return run
    return launcher


@pytest.mark.parametrize("half_precision", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("accumulation_steps", [1, 10])
def test_accumulation_with_weight_decay(half_precision, accumulation_steps):
    init_distributed(tp=1, dp=2, pp=1)(_run_accumulation_with_weight_decay)(
        half_precision=half_precision,
        accumulation_steps=accumulation_steps,
    )


def _run_accumulation_with_weight_decay(context, half_precision, accumulation_steps):
    model = nn.Linear(10, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, weight_decay=0.2)
    inputs, targets = torch.randn(10, 10), torch.randint(0, 2, (10,))
    for batch_idx in range(100):
        loss = nn.functional.cross_entropy(model(inputs), targets) / accumulation_steps
        loss.backward()
        if (batch_idx + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
