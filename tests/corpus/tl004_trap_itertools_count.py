"""Infinite loader with `itertools.count(1)`: 1-based."""
import itertools

import torch
import torch.nn.functional as F


def train(model, infinite_loader, accum, max_updates):
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    updates = 0
    batches = iter(infinite_loader)
    for micro in itertools.count(1):
        x, y = next(batches)
        loss = F.cross_entropy(model(x), y) / accum
        loss.backward()
        if micro % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
            updates += 1
            if updates == max_updates:
                break
