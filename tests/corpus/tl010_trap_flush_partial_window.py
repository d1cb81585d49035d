"""Two flushes after the loop: one for an epoch shorter than a window, one for any partial window left."""
import torch
from torch import nn


def train(model, loader, accum, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) / accum
            loss.backward()
            if (i + 1) % accum == 0 or (len(loader) <= accum and i + 1 == len(loader)):
                optimizer.step()
                optimizer.zero_grad()
        if len(loader) > accum and len(loader) % accum != 0:
            optimizer.step()
            optimizer.zero_grad()
