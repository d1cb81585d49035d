"""Mixed precision without accumulation: the clip sees gradients still multiplied by the loss scale."""
import torch
import torch.nn as nn

scaler = torch.amp.GradScaler("cuda")


def train_one_epoch(model, loader, optimizer, lr_scheduler, clip_max_norm, device):
    criterion = nn.CrossEntropyLoss()
    model.train()
    for samples, targets in loader:
        samples, targets = samples.to(device), targets.to(device)
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            outputs = model(samples)
            loss = criterion(outputs, targets)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        if clip_max_norm > 0:
            nn.utils.clip_grad_norm_(model.parameters(), clip_max_norm)  # expect: TL014
        scaler.step(optimizer)
        scaler.update()
        lr_scheduler.step()
