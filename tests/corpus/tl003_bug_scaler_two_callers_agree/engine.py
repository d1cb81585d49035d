"""`loss_scaler` is a `NativeScalerWithGradNormCount` whichever of train.py and pretrain.py calls this: both hand one of the same class,
whose `__call__` backpropagates the undivided mean loss."""
import torch


def train_one_epoch(model, criterion, data_loader, optimizer, loss_scaler, accum_iter):
    optimizer.zero_grad()
    for i, (samples, targets) in enumerate(data_loader):
        loss = criterion(model(samples), targets)
        step = (i + 1) % accum_iter == 0 or i + 1 == len(data_loader)
        loss_scaler(loss, optimizer, parameters=model.parameters(), update_grad=step)  # expect: TL003
        if step:
            optimizer.zero_grad()
