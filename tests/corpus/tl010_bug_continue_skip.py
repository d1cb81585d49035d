"""Accumulation with `continue`, MAE-style; nothing steps the tail of the epoch."""
import math

import torch


def train_one_epoch(model, data_loader, optimizer, device, epoch, accum_iter):
    model.train()
    optimizer.zero_grad()
    for data_iter_step, (samples, _) in enumerate(data_loader):
        samples = samples.to(device, non_blocking=True)
        loss, _, _ = model(samples, mask_ratio=0.75)
        if not math.isfinite(loss.item()):
            raise RuntimeError(f"Loss is {loss.item()}, stopping training")
        loss = loss / accum_iter
        loss.backward()
        if (data_iter_step + 1) % accum_iter != 0:  # expect: TL010
            continue
        optimizer.step()
        optimizer.zero_grad()
