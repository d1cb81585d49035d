"""A binding after the call reaches it when a loop encloses both: from the second epoch on, `fit` gets the
module inside the DDP wrap, so what the loop's `model` holds depends on the epoch."""
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def fit(model, loader, optimizer, accum):
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x), y) / accum
        loss.backward()
        if (i + 1) % accum == 0 or i + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def main(rank, net, loader, optimizer, epochs):
    model = DDP(net.to(rank), device_ids=[rank])
    for epoch in range(epochs):
        fit(model, loader, optimizer, 4)
        model = model.module
