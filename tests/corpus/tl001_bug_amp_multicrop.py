"""Multi-crop training with AMP: each image comes as a list of crops."""
import torch
from torch import nn


def train_epoch(model, loader, optimizer, device):
    criterion = nn.CrossEntropyLoss()
    scaler = torch.cuda.amp.GradScaler()
    model.train()
    for crops, labels in loader:
        labels = labels.to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = 0
        for crop in crops:
            with torch.autocast("cuda", dtype=torch.float16):
                loss += criterion(model(crop.to(device)), labels) / len(crops)
            scaler.scale(loss).backward()  # expect: TL001
        scaler.step(optimizer)
        scaler.update()
