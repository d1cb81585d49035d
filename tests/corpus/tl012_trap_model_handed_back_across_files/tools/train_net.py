"""The epoch loop rebinds `model` to what `contrastive_forward` (another file of the project) hands back:
the model it was given, not a tensor computed from it."""
import torch

from slowlib.models.contrastive import contrastive_forward


def train_epoch(train_loader, model, optimizer, scaler, cfg):
    for cur_iter, (inputs, labels) in enumerate(train_loader):
        inputs = [x.cuda(non_blocking=True) for x in inputs]
        with torch.cuda.amp.autocast(enabled=cfg.mixed_precision):
            optimizer.zero_grad()
            model, preds, loss, perform_backward = contrastive_forward(model, cfg, inputs, scaler)
        if perform_backward:
            scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
