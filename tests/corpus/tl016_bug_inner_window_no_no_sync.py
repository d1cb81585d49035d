"""DDP training with an inner accumulation loop: every micro-batch's backward all-reduces."""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


def main(net, loader, steps, grad_accum):
    rank = dist.get_rank()
    model = DDP(net.to(rank), device_ids=[rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    batches = iter(loader)
    for step in range(steps):
        for micro in range(grad_accum):
            x, y = next(batches)
            logits = model(x.to(rank))  # expect: TL016
            loss = F.cross_entropy(logits, y.to(rank)) / grad_accum
            loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
