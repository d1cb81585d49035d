"""Reweighted regression: only the weighted path reduces the per-sample losses."""
import torch.nn as nn


def fit(model, loader, optimizer, epochs, sample_weighting=False):
    criterion = nn.MSELoss(reduce=False)
    for epoch in range(epochs):
        for x, y, w in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            if sample_weighting:
                loss = (loss * w).sum() / w.sum()
            loss.backward()  # expect: TL018
            optimizer.step()
