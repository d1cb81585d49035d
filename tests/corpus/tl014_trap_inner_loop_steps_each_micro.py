"""Several AMP updates per batch of data, each with its own unscale, clip, step and scale update."""
import torch
import torch.nn.functional as F


def train(model, optimizer, scaler, loader, repeats):
    for x, y in loader:
        for _ in range(repeats):
            with torch.autocast("cuda", dtype=torch.float16):
                loss = F.mse_loss(model(x), y)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
