"""A learning-rate range test: the scheduler steps first, and a helper records the rate after the update.
The order is still wrong (the sweep skips its first rate), but moving the scheduler after the step would
make every recorded rate the next update's: the finding's fix is unsafe."""
import torch
from torch import nn


def record(history, optimizer, loss):
    history.append((optimizer.param_groups[0]["lr"], loss.item()))


def find_lr(loader, num_iter=100):
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-7, momentum=0.9)
    sweep = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda it: (10.0 / 1e-7) ** (it / num_iter))
    history = []
    for n, (images, labels) in enumerate(loader):
        if n > num_iter:
            break
        sweep.step()  # expect: TL009
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        record(history, optimizer, loss)
    return history
