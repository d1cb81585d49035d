"""Accumulation with a guard that aborts on a non-finite loss; the reset still runs on every micro-batch."""
import math

import torch
import torch.nn.functional as F


def train_epoch(model, loader, optimizer, accum_steps=8):
    model.train()
    for step, (images, labels) in enumerate(loader):
        logits = model(images)
        loss = F.cross_entropy(logits, labels) / accum_steps
        if not math.isfinite(loss.item()):
            raise RuntimeError(f"Loss is {loss.item()}, stopping training")
        loss.backward()
        if (step + 1) % accum_steps == 0 or (step + 1) == len(loader):
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        optimizer.zero_grad()  # expect: TL007
