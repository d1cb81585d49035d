"""Steps written by hand that reset what they read: each loop clears the gradient after its update, in the ways
tutorials do (`zero_()` on the gradient or its data, `= None`, a model's `zero_grad()`, a helper of this file)."""
import torch


def clear(tensors):
    for t in tensors:
        t.grad.zero_()


def train(model, loader, criterion, w1, w2, mask, lr=1e-6):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
                p.grad.zero_()
    for x, y in loader:
        loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        loss.backward()
        w1.data -= lr * w1.grad.data
        w2.data -= lr * w2.grad.data
        w1.grad.data.zero_()
        w2.grad.data.zero_()
    for x, y in loader:
        loss = (x.mm(w1).mm(w2) - y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            w1 -= lr * w1.grad
            w2 -= lr * w2.grad
        w1.grad = None
        w2.grad = None
    for x, y in loader:
        model.zero_grad()
        criterion(model(x), y).backward()
        for p in model.parameters():
            p.data.add_(p.grad.data, alpha=-lr)
    for x, y in loader:
        (x.mm(w1).mm(w2) - y).pow(2).sum().backward()
        with torch.no_grad():
            w1 -= lr * w1.grad
            w2 -= lr * w2.grad
        clear([w1, w2])
    for x, y in loader:
        (x.mm(w1).mm(w2) - y).pow(2).sum().backward()
        with torch.no_grad():
            w1 -= lr * w1.grad
            w1.grad[:] = 0
    for x, y in loader:
        (x.mm(w1).mm(w2) - y).pow(2).sum().backward()
        with torch.no_grad():
            w1[mask] = w1[mask] - lr * w1.grad[mask]
            w1.grad[mask] = 0
            w1.grad.zero_()
