"""The cosine schedule is sized in updates (`ceil(len(loader) / accum) * epochs`) but stepped on every
micro-batch: it reaches its minimum after a quarter of the run and restarts."""
import math

import torch
import torch.nn as nn
from torch.optim.lr_scheduler import CosineAnnealingLR


def fit(model, loader, epochs=100, accum=4):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    updates_per_epoch = math.ceil(len(loader) / accum)
    lr_scheduler = CosineAnnealingLR(optimizer, T_max=updates_per_epoch * epochs)
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) / accum
            loss.backward()
            lr_scheduler.step()  # expect: TL009
            if (i + 1) % accum == 0 or i + 1 == len(loader):
                optimizer.step()
                optimizer.zero_grad()
