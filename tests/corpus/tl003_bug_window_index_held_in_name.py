"""The window position is computed once into a name (`slot = step % accum`); the gradients are reset when a
window opens (`slot == 0`, before the backward) and applied when it closes (`slot == accum - 1`, or on the
epoch's last micro-batch). The mean loss
is not divided by `accum`."""
import torch
import torch.nn as nn


def train(model, loader, accum=8, epochs=3):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for epoch in range(epochs):
        for step, (x, y) in enumerate(loader):
            slot = step % accum
            if slot == 0:
                optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()  # expect: TL003
            if slot == accum - 1 or step + 1 == len(loader):
                optimizer.step()
