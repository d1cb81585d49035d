"""`step - warmup_start >= warmup` with `warmup_start` never moved is a threshold, not a window: after the
warm-up, every micro-batch steps."""
import torch


def train(model, optimizer, loader, warmup):
    warmup_start = 0
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        if step - warmup_start >= warmup:
            optimizer.step()
        optimizer.zero_grad()
