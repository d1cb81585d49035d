"""The step is indented into the logging branch, which tests the same counter at another interval: it runs
where both `(i + 1) % accum == 0` and `(i + 1) % log_interval == 0` hold, once every common multiple of
import torch
the two, a window the code does not spell out."""
from torch import nn


def train(model, loader, optimizer, accum, log_interval):
    criterion = nn.CrossEntropyLoss()
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        if (i + 1) % accum == 0:
            if (i + 1) % log_interval == 0:
                print(f"step {i + 1}: {loss.item():.3f}")
                optimizer.step()
                optimizer.zero_grad()
