"""Gradients reset by a loop over the parameters at the top of each iteration: a reset like `zero_grad()`."""
import torch


def train(model, loader, criterion):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for inputs, targets in loader:
        for param in model.parameters():
            param.grad = None
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()


def train_groups(model, loader, criterion, optimizer):
    for inputs, targets in loader:
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.detach_()
                    p.grad.zero_()
