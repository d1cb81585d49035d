"""Legacy `size_average=` and `**kwargs` criteria whose reduction is decided by a variable: not known to be a mean."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def train(model, loader, accum, average, loss_kwargs):
    criterion = nn.MSELoss(size_average=average)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        if (i + 1) % accum == 0 or i + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def train_functional(model, loader, accum, loss_kwargs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for i, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y, **loss_kwargs)
        loss.backward()
        if (i + 1) % accum == 0 or i + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
