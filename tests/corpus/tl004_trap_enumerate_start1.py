"""`enumerate(loader, 1)`: `i % N == 0` is right for a 1-based counter."""
import torch


def train(model, loader, criterion, accumulation_steps=8):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for i, (images, target) in enumerate(loader, 1):
        loss = criterion(model(images), target) / accumulation_steps
        loss.backward()
        if i % accumulation_steps == 0 or i == len(loader):
            optimizer.step()
            optimizer.zero_grad()
