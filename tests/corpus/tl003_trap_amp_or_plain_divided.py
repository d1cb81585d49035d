"""Mixed precision or not, the loss is divided by the accumulation count once, before the branches that
backpropagate it, and both steps close the same window that also takes the last micro-batch."""
import torch
import torch.nn.functional as F


def train_one_epoch(model, loader, optimizer, scaler, accum_steps=4, use_amp=True):
    model.train()
    for i, (images, targets) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = F.cross_entropy(model(images.cuda()), targets.cuda())
        loss = loss / accum_steps
        if use_amp:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        if (i + 1) % accum_steps == 0 or i + 1 == len(loader):
            if use_amp:
                scaler.step(optimizer)
                scaler.update()
            else:
                optimizer.step()
            optimizer.zero_grad(set_to_none=True)
