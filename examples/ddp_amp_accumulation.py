"""Distributed mixed-precision fine-tuning with gradient accumulation, the way many scripts write it.

Carries TL014: the gradients are clipped after every micro-batch, while they are
still a partial sum and still multiplied by the loss scale (the `unscale_` waits
for the window's end), so the step does not apply the clipped window gradient.
Carries TL016: the DDP model runs its forward outside `no_sync()` on every
micro-batch, so each backward all-reduces the gradients: `accum_steps`× the
communication the window needs.
The evaluation loop and the checkpointing are correct.
"""

import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


def evaluate(model, loader, device):
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for inputs, labels in loader:
            logits = model(inputs.to(device))
            total += F.cross_entropy(logits, labels.to(device), reduction="sum").item()
            count += labels.numel()
    model.train()
    return total / max(1, count)


def train(model, train_loader, val_loader, device, epochs=3, accum_steps=4, max_norm=1.0):
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=1.0, end_factor=0.0,
                                                  total_iters=epochs * len(train_loader) // accum_steps)
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(epochs):
        train_loader.sampler.set_epoch(epoch)
        for i, (inputs, labels) in enumerate(train_loader):
            with torch.autocast("cuda", dtype=torch.float16):
                logits = model(inputs.to(device))
                loss = F.cross_entropy(logits, labels.to(device)) / accum_steps
            scaler.scale(loss).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            if (i + 1) % accum_steps == 0 or i + 1 == len(train_loader):
                scaler.unscale_(optimizer)
                scaler.step(optimizer)
                scaler.update()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
        val_loss = evaluate(model, val_loader, device)
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: validation loss {val_loss:.4f}")
            torch.save(model.module.state_dict(), f"checkpoint-{epoch}.pt")


def main(build_model, build_loaders):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    model = DDP(build_model().to(device), device_ids=[local_rank])
    train_loader, val_loader = build_loaders()
    train(model, train_loader, val_loader, device)
    dist.destroy_process_group()
