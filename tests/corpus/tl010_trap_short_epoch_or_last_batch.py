"""The last batch always steps; the short-epoch test beside it changes nothing."""
import torch
from torch import nn


def train(model, loader, accum, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) / accum
            loss.backward()
            if (i + 1) % accum == 0 or len(loader) <= accum or i + 1 == len(loader):
                optimizer.step()
                optimizer.zero_grad()
