"""Mixed precision with an inner accumulation loop that unscales and clips after every micro-batch."""
import torch
import torch.nn.functional as F


def train(model, loader, steps, grad_accum, max_norm=1.0):
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
    scaler = torch.amp.GradScaler("cuda")
    batches = iter(loader)
    for step in range(steps):
        for _ in range(grad_accum):
            x, y = next(batches)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = F.cross_entropy(model(x), y) / grad_accum
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)  # expect: TL014
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)  # expect: TL014
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
