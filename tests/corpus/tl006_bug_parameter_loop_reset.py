"""Gradients cleared parameter by parameter between the backward and the step: the step applies nothing."""
import torch


def train(model, loader, criterion, lr=0.01):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    for inputs, targets in loader:
        loss = criterion(model(inputs), targets)
        loss.backward()
        for param in model.parameters():  # expect: TL006
            param.grad = None
        optimizer.step()
