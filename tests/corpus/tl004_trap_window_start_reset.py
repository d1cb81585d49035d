"""`i % N == 0` resets at the start of a window, before backward: correct."""
import torch.nn.functional as F


def train(model, loader, optimizer, n_accum=4):
    for i, (x, y) in enumerate(loader):
        if i % n_accum == 0:
            optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y) / n_accum
        loss.backward()
        if (i + 1) % n_accum == 0 or (i + 1) == len(loader):
            optimizer.step()
