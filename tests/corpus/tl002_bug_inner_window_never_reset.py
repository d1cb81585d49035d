"""Accumulation written as an inner loop, the gradients reset once before training and never again."""
import torch
import torch.nn.functional as F


def train(model, loader, steps, accum):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    optimizer.zero_grad()
    batches = iter(loader)
    for step in range(steps):
        for _ in range(accum):
            x, y = next(batches)
            (F.mse_loss(model(x), y) / accum).backward()
        optimizer.step()  # expect: TL002
