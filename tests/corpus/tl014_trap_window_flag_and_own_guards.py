"""The window's end computed once as a flag; unscale/clip and step/update under their own `if`s on it."""
import torch


def train_one_epoch(model, criterion, loader, optimizer, scaler, accum_iter, clip_grad=None):
    optimizer.zero_grad()
    for data_iter_step, (samples, targets) in enumerate(loader):
        samples = samples.cuda(non_blocking=True)
        targets = targets.cuda(non_blocking=True)
        update_grad = (data_iter_step + 1) % accum_iter == 0
        with torch.cuda.amp.autocast():
            loss = criterion(model(samples), targets)
        loss = loss / accum_iter
        scaler.scale(loss).backward()
        if update_grad:
            scaler.unscale_(optimizer)
            if clip_grad is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip_grad)
        if (data_iter_step + 1) % accum_iter == 0:
            scaler.step(optimizer)
        if (data_iter_step + 1) % accum_iter == 0:
            scaler.update()
            optimizer.zero_grad()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
