"""Every call of `loss_scaler` steps: `update_grad` is left at its default (`True`) or passed `True`. There
is no accumulation, so a mean loss needs no division (the `% print_freq` test only logs)."""
import torch


def train_one_epoch(model, criterion, data_loader, optimizer, loss_scaler, print_freq=10):
    for i, (samples, targets) in enumerate(data_loader):
        with torch.cuda.amp.autocast():
            loss = criterion(model(samples), targets)
        optimizer.zero_grad()
        loss_scaler(loss, optimizer, clip_grad=1.0, parameters=model.parameters())
        if (i + 1) % print_freq == 0:
            print(i, loss.item())


def finetune_one_epoch(model, criterion, data_loader, optimizer, loss_scaler, print_freq=10):
    for i, (samples, targets) in enumerate(data_loader):
        loss = criterion(model(samples), targets)
        optimizer.zero_grad()
        loss_scaler(loss, optimizer, update_grad=True)
        if (i + 1) % print_freq == 0:
            print(i, loss.item())
