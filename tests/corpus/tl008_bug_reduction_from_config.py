"""Whatever reduction the run picks, the criterion's output holds the graph: adding it to an epoch total keeps
every iteration's graph alive."""
import torch
import torch.nn as nn


def train(model, loader, args):
    criterion = nn.MSELoss(reduction=args.loss_reduction)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    total = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss  # expect: TL008
    return total / len(loader)
