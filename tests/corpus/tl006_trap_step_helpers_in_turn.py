"""Multi-task training through helpers: each call resets, backpropagates its task's loss and steps the shared
optimizer. The second helper's reset runs after the first helper's backward and before the third helper's step,
but a backward runs in between (its own, and the third helper's before its step): no step applies zeros."""
import torch.nn.functional as F


def classification_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def regression_step(model, optimizer, x, target, scale):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x)[:, 0], target) * scale
    loss.backward()
    optimizer.step()
    return loss.item()


def consistency_step(model, optimizer, x):
    optimizer.zero_grad()
    loss = (model(x) - model(x.flip(0))).pow(2).mean()
    loss.backward()
    optimizer.step()
    return loss.item()


def train(model, optimizer, loader):
    for x, y, target in loader:
        a = classification_step(model, optimizer, x, y)
        b = regression_step(model, optimizer, x, target, 0.5)
        c = consistency_step(model, optimizer, x)
        print(a, b, c)
