"""`no_sync()` wraps only the backward: the forward outside it has already armed DDP's all-reduce."""
import torch
import torch.nn.functional as F


def train_epoch(model, loader, optimizer, scheduler, accumulation_steps, rank):
    ddp_model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    for step, batch in enumerate(loader):
        logits = ddp_model(batch["input_ids"].to(rank))  # expect: TL016
        loss = F.cross_entropy(logits.flatten(0, 1), batch["labels"].to(rank).flatten()) / accumulation_steps
        if (step + 1) % accumulation_steps != 0 and step + 1 != len(loader):
            with ddp_model.no_sync():
                loss.backward()
        else:
            loss.backward()
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
