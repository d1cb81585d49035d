"""`micro_step` advances on every micro-batch; `optimizer_steps` counts steps for logging only."""
import torch
from torch import nn


def train(model, loader, accum=4):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    criterion = nn.MSELoss()
    micro_step = 0
    optimizer_steps = 0
    for inputs, targets in loader:
        micro_step += 1
        loss = criterion(model(inputs), targets) / accum
        loss.backward()
        if micro_step % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
            optimizer_steps += 1
            if optimizer_steps % 100 == 0:
                print(optimizer_steps, loss.item())
    if micro_step % accum != 0:  # the last, partial window
        optimizer.step()
        optimizer.zero_grad()
