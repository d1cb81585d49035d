"""The step's window is read through a method of the file's batch index: `is_interval` returns
`(self.idx + 1) % interval == 0` (or the epoch's last batch)."""
import torch
from torch import nn


class BatchIndex:
    def __init__(self, total):
        self.total = total
        self.idx = 0

    def is_interval(self, interval):
        if interval <= 0:
            return False
        if self.idx + 1 == self.total:
            return True
        return (self.idx + 1) % interval == 0

    def step(self):
        self.idx += 1


def train(model, loader, update_batches, epochs):
    optimizer = torch.optim.Adam(model.parameters())
    loss_func = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        batch_idx = BatchIndex(len(loader))
        for data, target in loader:
            loss = loss_func(model(data), target)
            loss.backward()  # expect: TL003
            if batch_idx.is_interval(update_batches):
                optimizer.step()
                optimizer.zero_grad()
            batch_idx.step()
