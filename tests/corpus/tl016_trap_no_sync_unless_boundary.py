"""DDP accumulation: forward and backward under `no_sync()` except on the window's last micro-batch."""
import contextlib

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main(args, model, loader):
    dist.init_process_group("nccl")
    local_rank = dist.get_rank() % torch.cuda.device_count()
    model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    criterion = torch.nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        loader.sampler.set_epoch(epoch)
        for i, (x, y) in enumerate(loader):
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            boundary = (i + 1) % args.accum == 0 or i + 1 == len(loader)
            with model.no_sync() if not boundary else contextlib.nullcontext():
                loss = criterion(model(x), y) / args.accum
                loss.backward()
            if boundary:
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
