"""Per-sample losses, importance-weighted and summed: a sum, not a mean."""
import torch.nn as nn


def train(model, loader, optimizer, accum=8):
    sample_loss = nn.CrossEntropyLoss(reduction="none")
    for i, (x, y, weights) in enumerate(loader):
        loss = (sample_loss(model(x), y) * weights).sum()
        loss.backward()
        if (i + 1) % accum == 0 or (i + 1) == len(loader):
            optimizer.step()
            optimizer.zero_grad()
