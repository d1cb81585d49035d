"""Resetting through the module, with `set_to_none=True`, under mixed precision."""
import torch
from torch.cuda.amp import GradScaler, autocast


def train_epoch(model, loader, optimizer, criterion, scaler: GradScaler):
    model.train()
    for inputs, targets in loader:
        model.zero_grad(set_to_none=True)
        with autocast():
            loss = criterion(model(inputs), targets)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
