"""A flag holding the step condition, one-based and flushing the last window: correct."""
import torch
from torch import nn


def train(model, loader, accumulation_steps=8):
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    criterion = nn.CrossEntropyLoss()
    for i, (inputs, labels) in enumerate(loader):
        is_last = i + 1 == len(loader)
        should_step = (i + 1) % accumulation_steps == 0 or is_last
        loss = criterion(model(inputs), labels) / accumulation_steps
        loss.backward()
        if should_step:
            optimizer.step()
            optimizer.zero_grad()
