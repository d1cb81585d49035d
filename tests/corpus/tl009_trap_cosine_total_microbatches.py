"""Cosine schedule over every micro-batch of the run (`T_max=len(loader) * epochs`), stepped on each; the
optimizer steps once per window of `accumulation_steps`."""
import torch
import torch.nn as nn
from torch.optim.lr_scheduler import CosineAnnealingLR


def fit(model, loader, epochs=100, accumulation_steps=2):
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    total_steps = len(loader) * epochs
    lr_scheduler = CosineAnnealingLR(optimizer, T_max=total_steps, eta_min=1e-5)
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) / accumulation_steps
            loss.backward()
            if (i + 1) % accumulation_steps == 0 or i + 1 == len(loader):
                optimizer.step()
                optimizer.zero_grad()
            lr_scheduler.step()
