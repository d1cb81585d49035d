"""Sample-weighted epoch loss; the product is still a tensor attached to the graph."""
import torch
from torch.cuda.amp import GradScaler, autocast


def train_epoch(model, loader, optimizer, criterion, device):
    scaler = GradScaler()
    model.train()
    epoch_loss = 0.0
    seen = 0
    for images, targets in loader:
        images, targets = images.to(device), targets.to(device)
        optimizer.zero_grad(set_to_none=True)
        with autocast():
            loss = criterion(model(images), targets)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        epoch_loss += loss * images.size(0)  # expect: TL008
        seen += images.size(0)
    return epoch_loss / seen
