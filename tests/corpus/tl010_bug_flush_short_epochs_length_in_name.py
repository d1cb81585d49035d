"""The flush after the loop runs only when the epoch, whose length `n` holds, fits in one window: a longer
epoch's last partial window is left for the next epoch."""
import torch
from torch import nn


def train(model, loader, accum, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()
    n = len(loader)
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) / accum
            loss.backward()
            if (i + 1) % accum == 0:  # expect: TL010
                optimizer.step()
                optimizer.zero_grad()
        if n <= accum:
            optimizer.step()
            optimizer.zero_grad()
