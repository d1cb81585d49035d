"""The gradients are copied into a shadow model's parameters (for statistics), but the optimized network's own
are never reset: its step applies the sum of every batch's gradients so far."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


def train(net: nn.Module, samples, epochs: int) -> None:
    shadow = copy.deepcopy(net)
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-2)
    for _ in range(epochs):
        for x, y in samples:
            loss = F.mse_loss(net(x), y)
            loss.backward()
            for param, mirror in zip(net.parameters(), shadow.parameters()):
                mirror.grad = param.grad.clone()
            optimizer.step()  # expect: TL002
