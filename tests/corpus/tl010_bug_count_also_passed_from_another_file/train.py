"""This file runs `train_accumulated` with 4, which divides the 100 micro-batches; `main.py` runs it with 3,
which does not: there the last micro-batch's gradients are never applied."""
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


def smoke_test():
    train_accumulated(nn.Linear(10, 2), accumulation_steps=4)
