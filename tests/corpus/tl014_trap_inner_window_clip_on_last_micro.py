"""The inner loop unscales and clips on its last micro-batch only, right before the step after it."""
import torch
import torch.nn.functional as F


def train(model, optimizer, scaler, batches, steps, accum):
    for step in range(steps):
        for micro in range(accum):
            x, y = next(batches)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = F.mse_loss(model(x), y) / accum
            scaler.scale(loss).backward()
            if micro == accum - 1:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
