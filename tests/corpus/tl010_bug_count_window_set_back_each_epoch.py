"""A micro-batch count set to 0 at the start of each epoch and at each step: `micro == accum` cannot hold on the
last micro-batch of an epoch whose length is not a multiple of the window; the left-over gradients leak into the
next epoch's first update."""
import torch
import torch.nn.functional as F


def fit(model, loader, epochs, accum):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(epochs):
        micro = 0
        for step, (x, y) in enumerate(loader):
            (F.cross_entropy(model(x), y) / accum).backward()
            micro += 1
            if micro == accum:  # expect: TL010
                optimizer.step()
                optimizer.zero_grad()
                micro = 0
