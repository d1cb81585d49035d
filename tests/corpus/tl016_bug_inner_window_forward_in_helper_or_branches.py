"""DDP with an inner accumulation loop whose forward is not a plain `model(x)` line: a helper the loop calls with
the model runs it (in both branches of its own `if`), or the loop calls the model in each branch of an
`if`/`else`. Either way the forward, and the backward's all-reduce, run on every micro-batch of the window."""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


def get_loss(model, x, y, cached):
    if cached is None:
        logits = model(x)
    else:
        logits = model(x, cached)
    return F.cross_entropy(logits, y)


def train_with_helper(net, loader, steps, accum):
    rank = dist.get_rank()
    model = DDP(net.to(rank), device_ids=[rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    batches = iter(loader)
    for step in range(steps):
        for micro in range(accum):
            x, y = next(batches)
            loss = get_loss(model, x.to(rank), y.to(rank), None) / accum  # expect: TL016
            loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)


def train_with_branches(net, loader, steps, accum, amp):
    rank = dist.get_rank()
    model = DDP(net.to(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = iter(loader)
    for step in range(steps):
        for micro in range(accum):
            x, y = next(batches)
            if amp:
                with torch.autocast("cuda"):
                    logits = model(x.to(rank))  # expect: TL016
            else:
                logits = model(x.to(rank).float())
            loss = F.cross_entropy(logits, y.to(rank)) / accum
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
