"""Each slice is its own update: reset, backward and step per slice."""
import torch
from torch import nn


def train(model, loader, micro_batch_size=8):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.MSELoss()
    for inputs, targets in loader:
        for start in range(0, len(inputs), micro_batch_size):
            optimizer.zero_grad()
            stop = start + micro_batch_size
            loss = criterion(model(inputs[start:stop]), targets[start:stop])
            loss.backward()
            optimizer.step()
