"""One test calls the worker with 10, which divides the 100 micro-batches, but the file also hands the
worker to `mp.spawn` with arguments from the command line: the count it runs with there is unknown, and
with one that does not divide 100 the last window's gradients are never applied."""
import sys

import torch
import torch.multiprocessing as mp
from torch import nn


def worker(rank, accumulation_steps):
    model = nn.Linear(10, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs, targets = torch.randn(10, 10), torch.randint(0, 2, (10,))
    for batch_idx in range(100):
        loss = nn.functional.cross_entropy(model(inputs), targets) / accumulation_steps
        loss.backward()
        if (batch_idx + 1) % accumulation_steps == 0:  # expect: TL010
            optimizer.step()
            optimizer.zero_grad()


def test_ten_micro_batches():
    worker(0, accumulation_steps=10)


if __name__ == "__main__":
    mp.spawn(worker, args=(int(sys.argv[1]),), nprocs=2)
