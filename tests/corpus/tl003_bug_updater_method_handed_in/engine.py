"""`updater` (a `GradUpdater` that main.py builds, util/updater.py) runs the backward and, when `update`
holds, the step: the loss is a mean over each micro-batch, never divided by `accum`, so each step applies
`accum` times the large-batch gradient."""
import torch.nn.functional as F


def train_one_epoch(model, loader, updater, accum):
    model.train()
    for i, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y)
        updater.backward_step(loss, update=(i + 1) % accum == 0 or i + 1 == len(loader))  # expect: TL003
