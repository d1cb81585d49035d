"""The loop's function is run from two tests, one passing 4 by keyword and one passing a module constant by
position, and through `functools.partial` with 5: every count divides the 100 micro-batches."""
import functools

import torch
from torch import nn

WINDOW = 20


def train_accumulated(model, accumulation_steps):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs, targets = torch.randn(10, 10), torch.randint(0, 2, (10,))
    for batch_idx in range(100):
        loss = nn.functional.cross_entropy(model(inputs), targets) / accumulation_steps
        loss.backward()
        if (batch_idx + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
    return model


def test_four_micro_batches():
    train_accumulated(nn.Linear(10, 2), accumulation_steps=4)


def test_module_window():
    train_accumulated(nn.Linear(10, 2), WINDOW)


def test_partial_five():
    functools.partial(train_accumulated, accumulation_steps=5)(nn.Linear(10, 2))
