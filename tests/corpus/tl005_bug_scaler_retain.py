"""Mixed precision with a retained graph on the only backward."""
import torch
from torch.cuda.amp import GradScaler, autocast


def train(model, loader, optimizer, criterion):
    scaler = GradScaler()
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)
        with autocast():
            loss = criterion(model(x), y)
        scaler.scale(loss).backward(retain_graph=True)  # expect: TL005
        scaler.step(optimizer)
        scaler.update()
