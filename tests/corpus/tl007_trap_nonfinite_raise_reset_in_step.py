"""Accumulation that aborts on a non-finite loss and resets gradients in the step's own block."""
import math

import torch
import torch.nn.functional as F


def train_epoch(model, loader, optimizer, scheduler, accum_steps=8):
    model.train()
    optimizer.zero_grad()
    for step, (images, labels) in enumerate(loader):
        loss = F.cross_entropy(model(images), labels) / accum_steps
        if not math.isfinite(loss.item()):
            optimizer.zero_grad()
            raise RuntimeError(f"Loss is {loss.item()}, stopping training")
        loss.backward()
        if (step + 1) % accum_steps == 0 or (step + 1) == len(loader):
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
