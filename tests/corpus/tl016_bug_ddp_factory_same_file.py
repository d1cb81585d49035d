"""A factory of the same file wraps the model in DDP (through a name it returns) and the loop accumulates
`accum` micro-batches without `no_sync()`: every backward all-reduces."""
import torch
import torch.distributed as dist
from torch import nn


def wrap_distributed(module, rank):
    module = module.cuda(rank)
    wrapped = nn.parallel.DistributedDataParallel(module, device_ids=[rank])
    return wrapped


def train(net, loader, accum, rank):
    dist.init_process_group("nccl")
    model = wrap_distributed(net, rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accum  # expect: TL016
        loss.backward()
        if (i + 1) % accum == 0 or i + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
