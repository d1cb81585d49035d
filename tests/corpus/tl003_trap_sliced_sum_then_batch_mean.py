"""Slices with summed losses, divided by the whole batch's size: the batch mean, exactly."""
import torch
from torch import nn


def train(model, loader, micro_batch_size=8):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.MSELoss(reduction="sum")
    for inputs, targets in loader:
        optimizer.zero_grad()
        for start in range(0, len(inputs), micro_batch_size):
            part = criterion(model(inputs[start:start + micro_batch_size]), targets[start:start + micro_batch_size])
            (part / len(inputs)).backward()
        optimizer.step()
