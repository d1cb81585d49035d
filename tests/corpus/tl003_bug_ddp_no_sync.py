"""DDP accumulation: no all-reduce on the window's first micro-batches, one at its end."""
import torch.nn as nn


def train_epoch(model, loader, optimizer, accum):
    criterion = nn.CrossEntropyLoss()
    for step, (x, y) in enumerate(loader):
        if (step + 1) % accum != 0 and step + 1 != len(loader):
            with model.no_sync():
                loss = criterion(model(x), y)
                loss.backward()  # expect: TL003
        else:
            loss = criterion(model(x), y)
            loss.backward()  # expect: TL003
            optimizer.step()
            optimizer.zero_grad()
