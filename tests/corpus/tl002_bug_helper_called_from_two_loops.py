"""Two training routines share one update helper that never resets the gradients: one bug, in one place."""
import torch
import torch.nn.functional as F


def update(model, optimizer, x, y):
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()  # expect: TL002
    return loss.item()


def pretrain(model, loader, lr=1e-3):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for x, y in loader:
        update(model, optimizer, x, y)


def finetune(model, loader, lr=1e-4):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for epoch in range(3):
        for x, y in loader:
            update(model, optimizer, x, y)
