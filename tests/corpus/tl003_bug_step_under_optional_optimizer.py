"""`if optimizer is not None:` inside the window holds on every window boundary (nothing in the loop
changes it): the window is still `grad_accum` micro-batches, their mean losses are summed, and the last
one is left unapplied."""
import torch
from torch import nn


def train(model, loader, optimizer=None, grad_accum=8):
    criterion = nn.MSELoss()
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()  # expect: TL003
        if (i + 1) % grad_accum == 0:  # expect: TL010
            if optimizer is not None:
                optimizer.step()
                optimizer.zero_grad()
