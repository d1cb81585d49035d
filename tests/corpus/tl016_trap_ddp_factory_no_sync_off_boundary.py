"""A factory wraps the model in DDP and the loop does it right: `no_sync()` around the forward and backward of
every micro-batch that does not step."""
import contextlib

import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def to_ddp(model, rank):
    return DDP(model.to(rank), device_ids=[rank])


def train(net, loader, accum, rank):
    model = to_ddp(net, rank)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step, (x, y) in enumerate(loader):
        boundary = (step + 1) % accum == 0 or step + 1 == len(loader)
        with model.no_sync() if not boundary else contextlib.nullcontext():
            loss = torch.nn.functional.mse_loss(model(x), y) / accum
            loss.backward()
        if boundary:
            optimizer.step()
            optimizer.zero_grad()
