"""The finetuning engines' shape: without DeepSpeed, `main` wraps the model in DDP (under `args.distributed`)
and builds the `loss_scaler` that runs the backward and, once a window, the step; with DeepSpeed, `loss_scaler`
is `None` and the engine runs `model.backward(loss)` and `model.step()` itself. The forward of the DDP model, in
`train_class_batch`, runs on every micro-batch outside `no_sync()`. The engine's forward, on the branch that
calls `model.backward(loss)`, is no DDP forward; `model.step()` is the engine's, which resets the gradients."""
import math
import sys

import torch


def train_class_batch(model, samples, target, criterion):
    outputs = model(samples)
    loss = criterion(outputs, target)
    return loss, outputs


def train_one_epoch(model, criterion, data_loader, optimizer, loss_scaler, update_freq):
    if loss_scaler is None:
        model.zero_grad()
    else:
        optimizer.zero_grad()
    for data_iter_step, (samples, targets) in enumerate(data_loader):
        if loss_scaler is None:
            loss, output = train_class_batch(model, samples.half(), targets, criterion)
        else:
            with torch.cuda.amp.autocast():
                loss, output = train_class_batch(model, samples, targets, criterion)  # expect: TL016
        loss_value = loss.item()
        if not math.isfinite(loss_value):
            sys.exit(1)
        last = data_iter_step + 1 == len(data_loader)
        if loss_scaler is None:
            loss /= update_freq
            model.backward(loss)
            model.step()
        else:
            loss /= update_freq
            loss_scaler(loss, optimizer, parameters=model.parameters(),
                        update_grad=(data_iter_step + 1) % update_freq == 0 or last)
            if (data_iter_step + 1) % update_freq == 0 or last:
                optimizer.zero_grad()
    return loss_value
