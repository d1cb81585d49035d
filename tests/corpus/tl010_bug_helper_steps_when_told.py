"""A micro-step helper of the file steps when the loop tells it the window is full: `(i + 1) % accum == 0`
never holds on an epoch's last micro-batch when the loader's length is not a multiple of `accum`."""
import torch.nn.functional as F


def micro_step(loss, optimizer, update):
    loss.backward()
    if update:
        optimizer.step()
        optimizer.zero_grad()


def train(model, optimizer, loader, accum, epochs):
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            loss = F.cross_entropy(model(x), y) / accum
            micro_step(loss, optimizer, (i + 1) % accum == 0)  # expect: TL010
