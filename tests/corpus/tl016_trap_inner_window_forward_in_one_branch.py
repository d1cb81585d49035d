"""Inner accumulation windows of a DDP model where the forward does not run on every micro-batch: only under an
`if` without an `else` (the other micro-batches reuse cached outputs), or in a helper that runs it in one branch
of its `if` only. Whether each micro-batch all-reduces is not shown: not flagged."""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


def maybe_forward(model, x, cached):
    if cached is None:
        out = model(x)
    else:
        out = cached
    return out


def train_cached(net, loader, steps, accum, refresh):
    rank = dist.get_rank()
    model = DDP(net.to(rank), device_ids=[rank])
    head = torch.nn.Linear(8, 2).to(rank)
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    batches = iter(loader)
    cached = None
    for step in range(steps):
        for micro in range(accum):
            x, y = next(batches)
            if refresh:
                cached = model(x.to(rank)).detach()
            loss = F.cross_entropy(head(cached), y.to(rank)) / accum
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def train_helper_one_branch(net, loader, steps, accum, features):
    rank = dist.get_rank()
    model = DDP(net.to(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = iter(loader)
    for step in range(steps):
        for micro in range(accum):
            x, y = next(batches)
            out = maybe_forward(model, x.to(rank), features)
            loss = F.cross_entropy(out, y.to(rank)) / accum
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
