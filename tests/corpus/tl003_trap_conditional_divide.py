"""Divide only when accumulating, then AMP."""
import torch
import torch.nn.functional as F


def train(args, model, loader, optimizer):
    scaler = torch.cuda.amp.GradScaler()
    accum = args.gradient_accumulation_steps
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda"):
            loss = F.cross_entropy(model(x), y)
        if accum > 1:
            loss = loss / accum
        scaler.scale(loss).backward()
        if (i + 1) % accum == 0 or (i + 1) == len(loader):
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
