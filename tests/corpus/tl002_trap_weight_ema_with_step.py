"""A weight-averaging helper of this file with a `step()`: it blends the weights, it reads no gradient."""
import copy

import torch
from torch import nn, optim


class WeightEMA(object):
    def __init__(self, model, ema_model, alpha=0.999):
        self.alpha = alpha
        self.params = list(model.state_dict().values())
        self.ema_params = list(ema_model.state_dict().values())

    def step(self):
        for param, ema_param in zip(self.params, self.ema_params):
            if ema_param.dtype == torch.float32:
                ema_param.mul_(self.alpha)
                ema_param.add_(param * (1.0 - self.alpha))


def train(loader, model, optimizer, ema_optimizer, criterion):
    model.train()
    for inputs, targets in loader:
        loss = criterion(model(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema_optimizer.step()


def main(loader):
    model = nn.Linear(8, 2)
    ema_model = copy.deepcopy(model)
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    ema_optimizer = WeightEMA(model, ema_model, alpha=0.99)
    train(loader, model, optimizer, ema_optimizer, nn.CrossEntropyLoss())
