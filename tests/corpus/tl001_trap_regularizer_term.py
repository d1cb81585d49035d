"""A loss plus an L1 penalty: `loss +=` inside the loop, but `loss` is fresh every batch."""
import torch
import torch.nn as nn


def l1_norm(model):
    return sum(p.abs().sum() for p in model.parameters())


def train(args, model, loader):
    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss += args.l1_weight * l1_norm(model)
            loss.backward()
            optimizer.step()
