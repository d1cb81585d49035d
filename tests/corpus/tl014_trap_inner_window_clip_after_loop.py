"""Unscale and clip once, after the inner accumulation loop, before the step."""
import torch
import torch.nn.functional as F


def train(model, loader, steps, grad_accum):
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
    scaler = torch.amp.GradScaler("cuda")
    batches = iter(loader)
    for step in range(steps):
        for _ in range(grad_accum):
            x, y = next(batches)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = F.cross_entropy(model(x), y) / grad_accum
            scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
