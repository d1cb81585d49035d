"""The last batch steps only in an epoch shorter than a window: a longer epoch's last partial window leaks."""
import torch
from torch import nn


def train(model, loader, accum, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) / accum
            loss.backward()
            if (i + 1) % accum == 0 or (len(loader) <= accum and i + 1 == len(loader)):  # expect: TL010
                optimizer.step()
                optimizer.zero_grad()
