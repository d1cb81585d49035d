"""The one call in the file passes a DDP model, but the loop's function is also handed on as a value (a
registry of training functions): whoever calls it from there may pass anything."""
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def fit(model, loader, optimizer, accum):
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x), y) / accum
        loss.backward()
        if (i + 1) % accum == 0 or i + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


TRAINERS = {"fit": fit}


def main(rank, net, loader, optimizer):
    model = DDP(net.to(rank), device_ids=[rank])
    fit(model, loader, optimizer, 4)
