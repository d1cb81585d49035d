"""Accumulation with `continue`: the scheduler sits after the skip, next to the optimizer's step."""
import torch.nn.functional as F


def train_epoch(model, loader, optimizer, lr_scheduler, accum, profiler=None):
    for i, (x, y) in enumerate(loader):
        if profiler is not None:
            profiler.step()
        loss = F.cross_entropy(model(x), y) / accum
        loss.backward()
        if (i + 1) % accum != 0 and (i + 1) != len(loader):
            continue
        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()
