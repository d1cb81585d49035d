"""Divided only when AMP is on: the full-precision path sums `accum` mean losses."""
import torch
from torch import nn


def train(model, loader, optimizer, scaler, accum, use_amp):
    criterion = nn.MSELoss()
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        if use_amp:
            loss = loss / accum
            scaler.scale(loss).backward()
        else:
            loss.backward()  # expect: TL003
        if (i + 1) % accum == 0 or i + 1 == len(loader):
            if use_amp:
                scaler.step(optimizer)
                scaler.update()
            else:
                optimizer.step()
            optimizer.zero_grad()
