"""The flush after the loop runs only when the whole epoch fits in one window: a longer epoch's last
partial window is left for the next epoch."""
import torch
from torch import nn


def train(model, loader, accum, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) / accum
            loss.backward()
            if (i + 1) % accum == 0:  # expect: TL010
                optimizer.step()
                optimizer.zero_grad()
        if len(loader) <= accum:
            optimizer.step()
            optimizer.zero_grad()
