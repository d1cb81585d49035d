"""The loop builds its `GradUpdater` (lib/updater.py) itself and lets it step when `i % accum == 0`: with `i`
counting from 0, the first update comes after one micro-batch instead of `accum`, and nothing applies the
micro-batches after the last step."""
import torch
import torch.nn.functional as F

from lib.updater import GradUpdater


def finetune(model, loader, accum, lr=1e-4):
    updater = GradUpdater(torch.optim.AdamW(model.parameters(), lr=lr))
    for i, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y) / accum
        updater.backward_step(loss, update=i % accum == 0)  # expect: TL004, TL010
