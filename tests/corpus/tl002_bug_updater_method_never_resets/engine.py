"""`updater` (a `StepUpdater` main.py builds, util/updater.py) backpropagates and steps, but nothing resets the
gradients after a step: each update applies the running sum of every gradient since training began."""
import torch.nn.functional as F


def train_one_epoch(model, loader, updater, accum):
    for i, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y) / accum
        updater.apply(loss, update=(i + 1) % accum == 0 or i + 1 == len(loader))  # expect: TL002
