"""Several updates on one batch: reset, backward and step on each repetition."""
import torch.nn.functional as F


def train(model, optimizer, loader, inner_steps):
    for x, y in loader:
        for _ in range(inner_steps):
            optimizer.zero_grad()
            F.mse_loss(model(x), y).backward()
            optimizer.step()
