"""Iterator-driven loop; the micro-batch counter is bumped at the end of the body."""
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, accum, max_micro_batches):
    it = iter(loader)
    micro = 0
    while micro < max_micro_batches:
        try:
            x, y = next(it)
        except StopIteration:
            it = iter(loader)
            continue
        loss = F.mse_loss(model(x), y) / accum
        loss.backward()
        if micro % accum == 0:  # expect: TL004
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
        micro += 1
