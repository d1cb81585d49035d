"""The engine.py family: `train_one_epoch` accumulates `accum_iter` micro-batches of the model `main.py` wraps
in `DistributedDataParallel` when `args.distributed` is set."""
import math
import sys

import torch


def train_one_epoch(model, criterion, data_loader, optimizer, device, epoch, accum_iter=1):
    model.train(True)
    optimizer.zero_grad()
    for data_iter_step, (samples, targets) in enumerate(data_loader):
        samples = samples.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        with torch.cuda.amp.autocast():
            outputs = model(samples)  # expect: TL016
            loss = criterion(outputs, targets)
        loss_value = loss.item()
        if not math.isfinite(loss_value):
            sys.exit(1)
        loss = loss / accum_iter
        loss.backward()
        if (data_iter_step + 1) % accum_iter == 0 or data_iter_step + 1 == len(data_loader):
            optimizer.step()
            optimizer.zero_grad()
    return {"loss": loss_value}
