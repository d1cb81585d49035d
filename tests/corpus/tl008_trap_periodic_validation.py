"""Validation inside the training loop, every `eval_every` steps, under `torch.no_grad()`."""
import torch
import torch.nn as nn


@torch.no_grad()
def evaluate(model, loader, criterion):
    model.eval()
    total = 0.0
    for x, y in loader:
        total += criterion(model(x), y)
    model.train()
    return total / len(loader)


def train(model, train_loader, val_loader, optimizer, eval_every=500):
    criterion = nn.CrossEntropyLoss()
    val_loss = 0.0
    for step, (x, y) in enumerate(train_loader):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        if step % eval_every == 0:
            model.eval()
            with torch.no_grad():
                val_loss = 0.0
                for vx, vy in val_loader:
                    val_loss += criterion(model(vx), vy)
                val_loss /= len(val_loader)
            model.train()
            print(step, loss.item(), val_loss.item(), evaluate(model, val_loader, criterion).item())
