"""DDP accumulation with `no_sync()`, the boundary test written for a 1-based counter."""
import torch.nn.functional as F


def train(model, loader, optimizer, accum):
    for i, (x, y) in enumerate(loader):
        if i % accum != 0:  # expect: TL004, TL010
            with model.no_sync():
                (F.cross_entropy(model(x), y) / accum).backward()
        else:
            (F.cross_entropy(model(x), y) / accum).backward()
            optimizer.step()
            optimizer.zero_grad()
