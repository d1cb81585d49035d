"""Under AMP, the gradients are clipped after every micro-batch while the optimizer steps only on the last
micro-batch of each window, which a generator of this file numbers (`micro % accum_steps`, over
`steps * accum_steps` micro-batches: whole windows only)."""
import torch
import torch.nn.functional as F


def windows(loader, accum_steps, steps):
    micro = 0
    while micro < steps * accum_steps:
        for batch in loader:
            if micro == steps * accum_steps:
                break
            yield batch, {"slot": micro % accum_steps}
            micro += 1


def train(model, loader, accum_steps=8, steps=1000):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = torch.cuda.amp.GradScaler()
    for (x, y), meta in windows(loader, accum_steps, steps):
        with torch.autocast("cuda"):
            loss = F.cross_entropy(model(x.cuda()), y.cuda()) / accum_steps
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: TL014
        if meta["slot"] == accum_steps - 1:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
