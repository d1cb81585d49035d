"""Several optimisation steps per batch, each on a fresh forward pass."""
import torch.nn as nn


def train(model, loader, optimizer, inner_steps=3):
    criterion = nn.MSELoss()
    for x, y in loader:
        for _ in range(inner_steps):
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward(retain_graph=True)  # expect: TL005
            optimizer.step()
