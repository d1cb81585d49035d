"""`loss_scaler` is a `NativeScalerWithGradNormCount` when train_native.py calls this, an `ApexScaler` (which steps on every call) when train_apex.py does: the two say different things of what a call of it runs, so
nothing is said."""
import torch


def train_one_epoch(model, criterion, data_loader, optimizer, loss_scaler, accum_iter):
    optimizer.zero_grad()
    for i, (samples, targets) in enumerate(data_loader):
        loss = criterion(model(samples), targets)
        step = (i + 1) % accum_iter == 0 or i + 1 == len(data_loader)
        loss_scaler(loss, optimizer, parameters=model.parameters(), update_grad=step)
        if step:
            optimizer.zero_grad()
