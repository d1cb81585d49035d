"""Accumulation in one branch only; the other resets, backpropagates and steps every iteration."""
import torch


def train_one_epoch(config, model, criterion, loader, optimizer, scaler):
    optimizer.zero_grad()
    for idx, (samples, targets) in enumerate(loader):
        outputs = model(samples)
        if config.accumulation_steps > 1:
            loss = criterion(outputs, targets) / config.accumulation_steps
            scaler.scale(loss).backward()
            if (idx + 1) % config.accumulation_steps == 0:
                scaler.step(optimizer)
                optimizer.zero_grad()
                scaler.update()
        else:
            loss = criterion(outputs, targets)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
    optimizer.step()
