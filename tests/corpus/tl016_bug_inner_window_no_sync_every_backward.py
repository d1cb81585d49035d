"""Every micro-batch's backward in the inner loop runs under `no_sync()`, the last one's too; the forward does
not. DDP arms the all-reduce in the forward, so each backward still all-reduces (8 of 8 on two gloo processes
with torch 2.13), and the step after the loop sees synchronised gradients."""
import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


def train(net, rank, batches, steps, accum):
    model = DDP(net, device_ids=[rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step in range(steps):
        for _ in range(accum):
            x, y = next(batches)
            loss = F.mse_loss(model(x), y) / accum  # expect: TL016
            with model.no_sync():
                loss.backward()
        optimizer.step()
        optimizer.zero_grad()
