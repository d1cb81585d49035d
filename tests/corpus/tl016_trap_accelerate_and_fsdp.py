"""Accelerate wraps the model itself and skips the synchronisation inside `accumulate()`; FSDP is not DDP."""
import torch
from accelerate import Accelerator
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def train_accelerate(model, optimizer, loader, accum):
    accelerator = Accelerator(gradient_accumulation_steps=accum)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for step, batch in enumerate(loader):
        with accelerator.accumulate(model):
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()


def train_fsdp(model, loader, accum):
    model = FSDP(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step, batch in enumerate(loader):
        if (step + 1) % accum != 0 and step + 1 != len(loader):
            with model.no_sync():
                (model(**batch).loss / accum).backward()
            continue
        (model(**batch).loss / accum).backward()
        optimizer.step()
        optimizer.zero_grad()
