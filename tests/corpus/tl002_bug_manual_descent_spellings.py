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
