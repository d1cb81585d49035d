"""SlowFast-style epoch: a contrastive forward helper (of an installed package) hands the model back with
its predictions; the other branch calls the model itself, so `model` is a module, not a tensor output."""
import torch

from videolib.models.contrastive import contrastive_forward


def train_epoch(train_loader, model, optimizer, scaler, loss_fun, cfg):
    model.train()
    for cur_iter, (inputs, labels) in enumerate(train_loader):
        inputs = [x.cuda(non_blocking=True) for x in inputs]
        labels = labels.cuda()
        with torch.cuda.amp.autocast(enabled=cfg.mixed_precision):
            optimizer.zero_grad()
            if cfg.contrastive:
                model, preds, partial_loss = contrastive_forward(model, cfg, inputs)
                loss = partial_loss
            else:
                preds = model(inputs)
                loss = loss_fun(preds, labels)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
