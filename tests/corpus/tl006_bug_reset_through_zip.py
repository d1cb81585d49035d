"""Weight averaging beside training: the loop walks the trained and the averaged parameters together and
drops the trained ones' gradients before the optimizer has stepped."""
import copy

import torch
from torch import nn


def train(loader, decay=0.99):
    model = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 2))
    average = copy.deepcopy(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for inputs, targets in loader:
        loss = nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        for step_index, (param, averaged) in enumerate(zip(model.parameters(), average.parameters())):  # expect: TL006
            averaged.data.mul_(decay).add_(param.data, alpha=1 - decay)
            param.grad = None
        optimizer.step()
