"""Legacy flags that still average: `size_average=True`, `reduce=True` (the old defaults)."""
import torch
import torch.nn as nn


def train(model, loader, accum):
    criterion = nn.MSELoss(size_average=True, reduce=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()  # expect: TL003
        if (i + 1) % accum == 0:  # expect: TL010
            optimizer.step()
            optimizer.zero_grad()
