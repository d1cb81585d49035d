"""`continue` until the window is full, with the 1-based test on a 0-based counter."""
import torch


def train(model, loader, criterion, accum_steps):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accum_steps
        loss.backward()
        if i % accum_steps:  # expect: TL004, TL010
            continue
        optimizer.step()
        optimizer.zero_grad()
