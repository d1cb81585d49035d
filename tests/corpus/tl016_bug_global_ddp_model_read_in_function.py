"""A script wraps its model in DDP at module level; the training function reads the global."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

dist.init_process_group("nccl")
rank = dist.get_rank()
model = DistributedDataParallel(torch.nn.Linear(32, 4).to(rank), device_ids=[rank])
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
ACCUM = 4


def train(loader):
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x), y) / ACCUM  # expect: TL016
        loss.backward()
        if (i + 1) % ACCUM == 0 or i + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


for epoch in range(3):
    train(range(10))
