"""A mean loss scaled with `.mul()` by a constant loss scale (not by the window's size) in an inner window:
still the sum of the micro-batches' means."""
import torch
import torch.nn.functional as F


def train(model, optimizer, batches, grad_accum=4, loss_scale=1.0, steps=100):
    for step in range(steps):
        optimizer.zero_grad()
        for micro in range(grad_accum):
            x, y = next(batches)
            loss = F.cross_entropy(model(x), y)
            loss.mul(loss_scale).backward()  # expect: TL003
        optimizer.step()
