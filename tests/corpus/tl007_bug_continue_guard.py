"""Accumulation written with `continue`; the reset still runs on every micro-batch."""
import torch.nn as nn


def train_one_epoch(model, loader, optimizer, accum_iter, device):
    criterion = nn.SmoothL1Loss()
    model.train()
    for data_iter_step, (samples, targets) in enumerate(loader):
        optimizer.zero_grad()  # expect: TL007
        samples = samples.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        loss = criterion(model(samples), targets)
        (loss / accum_iter).backward()
        if (data_iter_step + 1) % accum_iter != 0 and data_iter_step + 1 != len(loader):
            continue
        optimizer.step()
