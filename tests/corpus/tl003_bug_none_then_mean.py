"""Per-pixel losses masked, then averaged: still a mean over the micro-batch."""
import torch
import torch.nn as nn


def train(model, loader, optimizer, accum_iter=4):
    pixel_loss = nn.MSELoss(reduction="none")
    for it, (x, y, mask) in enumerate(loader):
        per_pixel = pixel_loss(model(x), y) * mask
        loss = per_pixel.mean()
        loss.backward()  # expect: TL003
        if (it + 1) % accum_iter == 0 or it + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
