"""`main.py` hands `train_one_epoch` a DDP model, `pretrain.py` a plain one, both accumulating: what `model` is
here depends on who runs it, so TL016 stays quiet."""
import torch


def train_one_epoch(model, criterion, data_loader, optimizer, device, accum_iter=1):
    for data_iter_step, (samples, targets) in enumerate(data_loader):
        loss = criterion(model(samples.to(device)), targets.to(device)) / accum_iter
        loss.backward()
        if (data_iter_step + 1) % accum_iter == 0 or data_iter_step + 1 == len(data_loader):
            optimizer.step()
            optimizer.zero_grad()
