"""Accumulation that skips a micro-batch on out-of-memory: the handler clears the half-done gradients."""
import torch


def train_epoch(model, loader, criterion, optimizer, accum=4):
    for i, (inputs, targets) in enumerate(loader):
        try:
            loss = criterion(model(inputs), targets) / accum
            if not torch.isfinite(loss):
                raise FloatingPointError("non-finite loss")
            loss.backward()
        except (torch.cuda.OutOfMemoryError, FloatingPointError):
            print(f"skipping batch {i}")
            optimizer.zero_grad(set_to_none=True)
            torch.cuda.empty_cache()
            continue
        if (i + 1) % accum == 0 or (i + 1) == len(loader):
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
