"""Step every batch; decay the LR and update the EMA every N batches."""
import torch
from torch.optim.lr_scheduler import StepLR
from torch.optim.swa_utils import AveragedModel


def train(model, loader, criterion, decay_every=1000, ema_every=10):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    lr_decay = StepLR(optimizer, step_size=1, gamma=0.5)
    ema = AveragedModel(model)
    for i, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
        if i % ema_every == 0:
            ema.update_parameters(model)
        if i % decay_every == 0 and i > 0:
            lr_decay.step()
