"""The step's condition is a multiple of the outer one on the same counter: it runs once every
`2 * accum` micro-batches, a window the code spells out, and no step after the loop applies the last one."""
from torch import nn


def train(model, loader, optimizer, accum=4):
    criterion = nn.CrossEntropyLoss()
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accum
        loss.backward()
        if (i + 1) % accum == 0:
            print("window", i)
            if (i + 1) % (2 * accum) == 0:  # expect: TL010
                optimizer.step()
                optimizer.zero_grad()
