"""Micro-batch counter accumulation; the cosine schedule counts micro-batches, not updates."""
import torch
import torch.nn.functional as F
from torch.optim import lr_scheduler


def train(model, loader, cfg):
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=0.9)
    sched = lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg.total_updates)
    micro = 0
    for epoch in range(cfg.epochs):
        for x, y in loader:
            loss = F.cross_entropy(model(x), y) / cfg.accum
            loss.backward()
            micro += 1
            sched.step()  # expect: TL009
            if micro == cfg.accum:  # expect: TL010
                optimizer.step()
                optimizer.zero_grad()
                micro = 0
