"""`i % N == N - 1` is true on the N-th micro-batch of each window."""
import torch
import torch.nn as nn


def train(model, loader, accum=4):
    criterion = nn.SmoothL1Loss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.999)
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accum
        loss.backward()
        if i % accum == accum - 1:
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
    optimizer.step()  # the last, partial window
    optimizer.zero_grad()
