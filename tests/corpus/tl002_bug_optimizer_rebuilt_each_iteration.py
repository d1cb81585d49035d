"""Rebuilding the optimizer every iteration over the model's parameters resets nothing in `.grad`."""
import torch


def finetune(model, loader, criterion, lr=1e-3):
    for inputs, targets in loader:
        optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()  # expect: TL002
