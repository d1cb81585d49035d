"""DeiT-style: the scaler handed to `train_one_epoch` is timm's (an installed package: what it runs is not
read), and `train_distill` is called by no file of the project: what `loss_scaler` is there is unknown.
Neither loop is known to backpropagate, so nothing is said about the undivided loss."""
import torch


def train_one_epoch(model, criterion, data_loader, optimizer, device, loss_scaler, accum_iter):
    optimizer.zero_grad()
    for i, (samples, targets) in enumerate(data_loader):
        with torch.cuda.amp.autocast():
            loss = criterion(model(samples.to(device)), targets.to(device))
        loss_scaler(loss, optimizer, parameters=model.parameters(), update_grad=(i + 1) % accum_iter == 0)
        if (i + 1) % accum_iter == 0:
            optimizer.zero_grad()


def train_distill(model, teacher, criterion, data_loader, optimizer, loss_scaler, accum_iter):
    optimizer.zero_grad()
    for i, (samples, targets) in enumerate(data_loader):
        with torch.no_grad():
            soft = teacher(samples)
        loss = criterion(model(samples), soft)
        loss_scaler(loss, optimizer, parameters=model.parameters(), update_grad=(i + 1) % accum_iter == 0)
        if (i + 1) % accum_iter == 0:
            optimizer.zero_grad()
