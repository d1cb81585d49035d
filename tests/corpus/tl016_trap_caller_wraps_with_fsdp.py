"""The caller shards the model with FSDP, not DDP: TL016 speaks of DDP only (FSDP's `no_sync()` trades memory for
the communication, a choice, not a bug)."""
import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def fit(model, loader, optimizer, accum):
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x), y) / accum
        loss.backward()
        if (i + 1) % accum == 0 or i + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def main(rank, net, loader, accum):
    model = FSDP(net.to(rank))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    fit(model, loader, optimizer, accum)
