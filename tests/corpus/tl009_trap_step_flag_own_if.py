"""The step and the scheduler each under their own `if` on one flag that holds the window's condition."""
import torch
from torch import nn


def train(model, loader, scheduler, accum=4):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    criterion = nn.CrossEntropyLoss()
    for i, (x, y) in enumerate(loader):
        should_step = (i + 1) % accum == 0 or i + 1 == len(loader)
        loss = criterion(model(x), y) / accum
        loss.backward()
        if should_step:
            optimizer.step()
            optimizer.zero_grad()
        if should_step:
            scheduler.step()
