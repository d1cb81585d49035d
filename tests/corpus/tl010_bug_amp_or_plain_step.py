"""A trainer that steps through the `GradScaler` with AMP and directly without: both steps close the same
window, whose condition cannot hold on the last micro-batch (one bug, one finding)."""
import torch
import torch.nn.functional as F


def train_one_epoch(model, loader, optimizer, scaler, accum_steps=4, use_amp=True):
    model.train()
    for i, (images, targets) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = F.cross_entropy(model(images.cuda()), targets.cuda()) / accum_steps
        if use_amp:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        if (i + 1) % accum_steps == 0:  # expect: TL010
            if use_amp:
                scaler.step(optimizer)
                scaler.update()
            else:
                optimizer.step()
            optimizer.zero_grad(set_to_none=True)
