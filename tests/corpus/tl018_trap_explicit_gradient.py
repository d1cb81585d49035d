"""Per-sample losses backpropagated with an explicit gradient (a weighted mean without building it)."""
import torch
import torch.nn as nn


def train(model, loader, optimizer, epochs):
    criterion = nn.MSELoss(reduction="none")
    for _ in range(epochs):
        for x, y, w in loader:
            per_sample = criterion(model(x), y).mean(dim=1)
            optimizer.zero_grad()
            per_sample_raw = criterion(model(x), y)
            per_sample_raw.backward(gradient=w[:, None].expand_as(per_sample_raw) / w.sum())
            torch.autograd.backward([per_sample], [torch.zeros_like(per_sample)])
            optimizer.step()
