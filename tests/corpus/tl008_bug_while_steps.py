"""Iteration-based training with a manual counter; the loss meter sums tensors."""
import torch
import torch.nn as nn


def train(model, data_iter, max_iters, lr=3e-4, log_interval=200):
    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    it = 0
    interval_loss = 0.0
    while it < max_iters:
        x, y = next(data_iter)
        pred = model(x)
        loss = criterion(pred, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        interval_loss += criterion(pred, y)  # expect: TL008
        it += 1
        if it % log_interval == 0:
            print(f"iter {it}: {interval_loss / log_interval:.4f}")
            interval_loss = 0.0
