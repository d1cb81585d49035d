"""Two micro-step helpers of the file that step when told: one is passed the loss already divided by the
window's size, the other divides what it is passed itself before its backward. Nothing is left undivided, and
every window, the last included, steps."""
import torch.nn.functional as F


def micro_step(loss, optimizer, update=True):
    loss.backward()
    if update:
        optimizer.step()
        optimizer.zero_grad()


def scaled_step(loss, optimizer, accum, update=True):
    (loss / accum).backward()
    if update:
        optimizer.step()
        optimizer.zero_grad()


def train(model, optimizer, loader, accum, epochs):
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            loss = F.cross_entropy(model(x), y)
            micro_step(loss / accum, optimizer, update=(i + 1) % accum == 0 or i + 1 == len(loader))


def finetune(model, optimizer, loader, accum):
    for i, (x, y) in enumerate(loader):
        scaled_step(F.mse_loss(model(x), y), optimizer, accum, (i + 1) % accum == 0 or i + 1 == len(loader))
