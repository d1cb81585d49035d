"""The step condition lives in a flag (1-based and right); the mean loss is never divided."""
import torch
from torch import nn


def train(model, loader, accumulation_steps=8):
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    criterion = nn.CrossEntropyLoss()
    for step, (inputs, labels) in enumerate(loader, start=1):
        sync_now = step % accumulation_steps == 0 or step == len(loader)
        loss = criterion(model(inputs), labels)
        loss.backward()  # expect: TL003
        if sync_now:
            optimizer.step()
            optimizer.zero_grad()
