"""An inner loop counted from 1 that skips the all-reduce by wrapping the backward of early micro-batches."""
import torch
from torch.nn.parallel import DistributedDataParallel


def train(module, local_rank, batches, steps, accum):
    model = DistributedDataParallel(module, device_ids=[local_rank])
    criterion = torch.nn.MSELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(steps):
        for i in range(1, accum + 1):
            x, y = next(batches)
            loss = criterion(model(x), y) / accum  # expect: TL016
            if i < accum:
                with model.no_sync():
                    loss.backward()
            else:
                loss.backward()
        optimizer.step()
        optimizer.zero_grad()
