"""AMP accumulation that names the scaled loss before its backward: the loss inside `scaler.scale(...)` is
already divided by `accum`."""
import torch
from torch import nn

criterion = nn.CrossEntropyLoss()
scaler = torch.cuda.amp.GradScaler()


def train(model, optimizer, loader, accum):
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda"):
            loss = criterion(model(x), y)
        scaled_loss = scaler.scale(loss / accum)
        scaled_loss.backward()
        if (i + 1) % accum == 0 or i + 1 == len(loader):
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
