"""`tracker` is a `LossHistory` (util/misc.py), whose `__call__` runs no backward: this loop trains
nothing, whatever it passes."""
import torch


def evaluate_windows(model, criterion, data_loader, optimizer, tracker, accum_iter):
    for i, (samples, targets) in enumerate(data_loader):
        with torch.no_grad():
            loss = criterion(model(samples), targets)
        tracker(loss, optimizer, update_grad=(i + 1) % accum_iter == 0)
