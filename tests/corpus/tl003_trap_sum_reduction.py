"""Summed loss: the window's sum already equals the large batch's sum."""
import torch
import torch.nn as nn


def train(model, loader, accum_steps=4):
    criterion = nn.MSELoss(reduction="sum")
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
    for epoch in range(10):
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        if len(loader) % accum_steps:
            optimizer.step()
            optimizer.zero_grad()
