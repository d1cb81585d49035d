"""Two tests run the loop's function, with 4 and with 3: 3 does not divide the 100 micro-batches, so with it
the last micro-batch's gradients are never applied."""
import torch
from torch import nn


def train_accumulated(model, accumulation_steps):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs, targets = torch.randn(10, 10), torch.randint(0, 2, (10,))
    for batch_idx in range(100):
        loss = nn.functional.cross_entropy(model(inputs), targets) / accumulation_steps
        loss.backward()
        if (batch_idx + 1) % accumulation_steps == 0:  # expect: TL010
            optimizer.step()
            optimizer.zero_grad()
    return model


def test_four_micro_batches():
    train_accumulated(nn.Linear(10, 2), accumulation_steps=4)


def test_three_micro_batches():
    train_accumulated(nn.Linear(10, 2), 3)
