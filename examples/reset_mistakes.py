"""Two ways to put `zero_grad()` in the wrong place.

Carries TL006 (`train_wiped`: the reset sits between backward and step, so every step applies
zeros) and TL007 (`train_accumulated`: resetting every micro-batch disables accumulation).
"""

import torch
import torch.nn as nn


def train_wiped(model: nn.Module, loader, epochs: int = 5):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    criterion = nn.MSELoss()
    for _ in range(epochs):
        for features, targets in loader:
            predictions = model(features)
            loss = criterion(predictions, targets)
            loss.backward()
            optimizer.zero_grad()
            optimizer.step()
    return model


def train_accumulated(model: nn.Module, loader, accum_steps: int = 8):
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    for step, batch in enumerate(loader):
        optimizer.zero_grad()
        outputs = model(**batch)
        loss = outputs.loss / accum_steps
        loss.backward()
        if (step + 1) % accum_steps == 0 or (step + 1) == len(loader):
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
    return model
