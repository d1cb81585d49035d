"""The training epoch of an engine.py trainer: `loss_scaler` (built in main.py from util/misc.py) runs the
backward and, when `update_grad` holds, the step. The loss is a mean over each micro-batch, never divided by
`accum_iter`: each step applies `accum_iter` times the large-batch gradient."""
import math
import sys

import torch


def train_one_epoch(model, criterion, data_loader, optimizer, device, epoch, loss_scaler, args=None):
    model.train(True)
    accum_iter = args.accum_iter
    optimizer.zero_grad()
    for data_iter_step, (samples, targets) in enumerate(data_loader):
        samples = samples.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        with torch.cuda.amp.autocast():
            outputs = model(samples)
            loss = criterion(outputs, targets)
        loss_value = loss.item()
        if not math.isfinite(loss_value):
            sys.exit(1)
        last = data_iter_step + 1 == len(data_loader)
        loss_scaler(loss, optimizer, parameters=model.parameters(),  # expect: TL003
                    update_grad=(data_iter_step + 1) % accum_iter == 0 or last)
        if (data_iter_step + 1) % accum_iter == 0 or last:
            optimizer.zero_grad()
    return loss_value
