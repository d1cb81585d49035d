"""The loss is rebound after the step, but to a value that still carries its graph, and summed for logging."""
import torch
import torch.nn as nn


def train(model, loader, optimizer, device):
    criterion = nn.CrossEntropyLoss()
    epoch_loss = 0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        loss = criterion(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        loss = loss.cpu()
        epoch_loss += loss  # expect: TL008
    return epoch_loss / len(loader)
