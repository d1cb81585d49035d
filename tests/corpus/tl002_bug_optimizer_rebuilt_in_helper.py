"""A helper of this file rebuilds the optimizer every iteration over the parameters of the model built before the loop: nothing resets their gradients."""
import torch
import torch.nn as nn


def make_optimizer(model, lr):
    return torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)


def train(model, loader, lr=0.01):
    criterion = nn.CrossEntropyLoss()
    for images, labels in loader:
        optimizer = make_optimizer(model, lr)
        loss = criterion(model(images), labels)
        loss.backward()
        optimizer.step()  # expect: TL002
