"""Criterion imported under an alias, 1-based batch counter."""
import torch
from torch.nn import CrossEntropyLoss as CE


def train(model, loader, accum=4, lr=0.1):
    criterion = CE(label_smoothing=0.1)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for i, (x, y) in enumerate(loader, start=1):
        loss = criterion(model(x), y)
        loss.backward()  # expect: TL003
        if i % accum == 0 or i == len(loader):
            optimizer.step()
            optimizer.zero_grad()
