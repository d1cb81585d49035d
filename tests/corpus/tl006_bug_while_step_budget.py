"""Step-budgeted training with a manual counter; the reset was moved next to the clipping."""
import torch
from torch import nn, optim


def train(model, loader, max_steps=10_000, log_every=100):
    criterion = nn.MSELoss()
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    step = 0
    data_iter = iter(loader)
    while step < max_steps:
        try:
            inputs, targets = next(data_iter)
        except StopIteration:
            data_iter = iter(loader)
            inputs, targets = next(data_iter)
        preds = model(inputs)
        loss = criterion(preds, targets)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
        optimizer.zero_grad()  # expect: TL006
        optimizer.step()
        step += 1
        if step % log_every == 0:
            print(f"step {step}: loss {loss.item():.4f}")
