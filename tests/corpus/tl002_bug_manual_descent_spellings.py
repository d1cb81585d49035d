"""Steps written by hand over a model's parameters and over named tensors, in the spellings of older tutorials;
none of the loops resets a gradient."""
import torch


def train_parameters(model, loader, criterion, lr=0.01):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad  # expect: TL002


def train_named(model, loader, criterion, lr=0.01):
    for x, y in loader:
        criterion(model(x), y).backward()
        for name, param in model.named_parameters():
            param.data = param.data - lr * param.grad.data  # expect: TL002


def train_tensors(w1, w2, loader, lr=1e-6):
    for x, y in loader:
        y_pred = x.mm(w1).clamp(min=0).mm(w2)
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        w1.data.sub_(lr * w1.grad.data)  # expect: TL002
        w2.data.add_(w2.grad.data, alpha=-lr)  # expect: TL002


def refine_masked(points, weights, mask, energy, steps=20, lr=0.02):
    points = points.clone().requires_grad_(True)
    weights = weights.clone().requires_grad_(True)
    for _ in range(steps):
        energy(points, weights).sum().backward()
        with torch.no_grad():
            points[mask] = points[mask] - points.grad[mask] * lr  # expect: TL002
            weights[mask] = weights[mask] - weights.grad[mask] * lr  # expect: TL002
        points.requires_grad_(True)
