"""An engine.py trainer with its loss scaler in the same file: `scaler(loss, optimizer, update_grad=...)` runs
the backward of the loss it is passed, on every call, and the step once a window. The loop passes the
micro-batch's mean loss undivided."""
import torch
import torch.nn.functional as F


class LossScaler:
    def __init__(self):
        self._scaler = torch.cuda.amp.GradScaler()

    def __call__(self, loss, optimizer, clip_grad=None, update_grad=True):
        self._scaler.scale(loss).backward()  # expect: TL003
        if update_grad:
            if clip_grad is not None:
                self._scaler.unscale_(optimizer)
            self._scaler.step(optimizer)
            self._scaler.update()


def train(model, optimizer, loader, accum, epochs):
    scaler = LossScaler()
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            with torch.cuda.amp.autocast():
                loss = F.cross_entropy(model(x), y)
            boundary = (i + 1) % accum == 0 or i + 1 == len(loader)
            scaler(loss, optimizer, clip_grad=1.0, update_grad=boundary)
            if boundary:
                optimizer.zero_grad()
