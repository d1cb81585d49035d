"""The window's loss is summed and reset at its start, but backpropagated every micro-batch."""
import torch.nn as nn


def train(model, loader, optimizer, accum=4):
    criterion = nn.CrossEntropyLoss()
    for i, (x, y) in enumerate(loader):
        if i % accum == 0:
            window_loss = 0
        window_loss = window_loss + criterion(model(x), y) / accum
        window_loss.backward()  # expect: TL001
        if (i + 1) % accum == 0 or (i + 1) == len(loader):
            optimizer.step()
            optimizer.zero_grad()
