"""Emulate a batch of 64 with micro-batches of one image each.

Carries TL004: `i % real_batch == 0` is true on the very first micro-batch
(`enumerate` counts from 0), so the first update uses one image, not 64.
"""

import torch
import torch.nn as nn


def train(model, dataset, epochs: int = 1, real_batch: int = 64):
    model.cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = torch.nn.MSELoss()
    for _ in range(epochs):
        optimizer.zero_grad()
        for i, data in enumerate(dataset):
            x = data["image"].cuda()
            y = data["label"].cuda()
            output = model(x)
            loss = criterion(output, y)
            (loss / real_batch).backward()
            if i % real_batch == 0:
                optimizer.step()
                optimizer.zero_grad()
        # Apply what is left of the last window.
        optimizer.step()
        optimizer.zero_grad()
    return model


if __name__ == "__main__":
    net = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 1))
    samples = [{"image": torch.randn(1, 3, 32, 32), "label": torch.randn(1, 1)} for _ in range(256)]
    train(net, samples)
