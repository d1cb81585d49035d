"""`global_step` counts optimizer steps, and the step waits for `global_step % accum == 0`."""
import torch
from torch import nn


def train(model, loader, accum=4, epochs=3):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    criterion = nn.MSELoss()
    global_step = 0
    for epoch in range(epochs):
        for inputs, targets in loader:
            should_step = global_step % accum == 0  # expect: TL004
            loss = criterion(model(inputs), targets) / accum
            loss.backward()
            if should_step:
                optimizer.step()
                optimizer.zero_grad()
            global_step += int(should_step)
