"""`continue` until the window is full; `(i + 1)` with a 0-based counter is right."""
import torch


def train(model, loader, criterion, accum_steps):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accum_steps
        loss.backward()
        if (i + 1) % accum_steps != 0 and (i + 1) != len(loader):
            continue
        optimizer.step()
        optimizer.zero_grad()
