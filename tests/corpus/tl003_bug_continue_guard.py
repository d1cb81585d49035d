"""The step is skipped with `continue` until the window is full."""
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, accum_iter):
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=len(loader) // accum_iter)
    for i, (x, y) in enumerate(loader):
        loss = F.binary_cross_entropy_with_logits(model(x), y)
        loss.backward()  # expect: TL003
        if (i + 1) % accum_iter != 0 and (i + 1) != len(loader):
            continue
        optimizer.step()
        optimizer.zero_grad()
        scheduler.step()
