"""The caller builds the DDP model in the very call that hands it to the accumulating loop."""
import torch
from torch import nn


def fit(model, loader, optimizer, grad_accum):
    for step, (x, y) in enumerate(loader):
        loss = nn.functional.cross_entropy(model(x), y) / grad_accum  # expect: TL016
        loss.backward()
        if (step + 1) % grad_accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def main(rank, net, loader):
    net = net.to(rank)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    fit(nn.parallel.DistributedDataParallel(net, device_ids=[rank]), loader, optimizer, grad_accum=8)
