"""Gradients cleared over a list of trainable parameters after the step: the usual place."""
import torch
import torch.nn as nn


def fit(model: nn.Module, loader, epochs=10):
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            for p in params:
                p.grad = None
