"""Gradients summed over the micro-batches, divided by their number once, after the inner loop."""
import torch
import torch.nn.functional as F


def train(model, optimizer, batches, steps, accum):
    for step in range(steps):
        for _ in range(accum):
            x, y = next(batches)
            F.mse_loss(model(x), y).backward()
        for p in model.parameters():
            p.grad /= accum
        optimizer.step()
        optimizer.zero_grad()
