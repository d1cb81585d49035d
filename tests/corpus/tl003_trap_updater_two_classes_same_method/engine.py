"""`updater` is a `GradUpdater` when train_accum.py calls this and an `EveryStepUpdater` (which steps on every
call) when train_plain.py does: what `updater.backward_step()` runs is not one thing, so nothing is said."""
import torch.nn.functional as F


def train_one_epoch(model, loader, updater, accum):
    for i, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y)
        updater.backward_step(loss, update=(i + 1) % accum == 0 or i + 1 == len(loader))
