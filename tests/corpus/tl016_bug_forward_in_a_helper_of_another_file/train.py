"""The forward of the DDP model runs in `batches.forward_batch`, which the loop calls with the model on every
micro-batch, outside `no_sync()`."""
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

from batches import forward_batch


def train(rank, net, loader, optimizer, criterion, accum):
    model = DDP(net.to(rank), device_ids=[rank])
    for i, batch in enumerate(loader):
        loss = forward_batch(model, batch, criterion) / accum  # expect: TL016
        loss.backward()
        if (i + 1) % accum == 0 or i + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
