"""`compute_loss` (same file) scales the loss; `backward_step` runs backward on what it returns."""
import torch
from torch import nn

criterion = nn.MSELoss()


def compute_loss(model, batch, accumulation_steps):
    inputs, targets = batch
    return criterion(model(inputs), targets) / accumulation_steps


def backward_step(model, batch, accumulation_steps):
    loss = compute_loss(model, batch, accumulation_steps)
    loss.backward()


def train(model, loader, accumulation_steps=4):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for i, batch in enumerate(loader):
        backward_step(model, batch, accumulation_steps)
        if (i + 1) % accumulation_steps == 0 or i + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
