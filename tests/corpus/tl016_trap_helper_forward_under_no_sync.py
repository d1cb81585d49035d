"""The helper the loop calls runs the forward itself under `model.no_sync()` on the micro-batches that do not
step, or hands it a module it unwraps first, or may return before the forward: none arms an all-reduce the
loop can be blamed for."""
import contextlib

import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def forward_synced(model, samples, target, criterion, boundary, update_freq):
    with contextlib.nullcontext() if boundary else model.no_sync():
        loss = criterion(model(samples), target) / update_freq
        loss.backward()
    return loss


def forward_unwrapped(model, samples, target, criterion):
    model = model.module
    return criterion(model(samples), target)


def forward_when_ready(model, samples, target, criterion):
    if samples is None:
        return None
    return criterion(model(samples), target)


def train(rank, net, loader, optimizer, criterion, update_freq):
    model = DDP(net.to(rank), device_ids=[rank])
    for step, (samples, targets) in enumerate(loader):
        boundary = (step + 1) % update_freq == 0 or step + 1 == len(loader)
        forward_synced(model, samples, targets, criterion, boundary, update_freq)
        loss = forward_unwrapped(model, samples, targets, criterion) + forward_when_ready(
            model, samples, targets, criterion)
        (loss / update_freq).backward()
        if boundary:
            optimizer.step()
            optimizer.zero_grad()
