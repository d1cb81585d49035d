"""Micro-batches cut from each batch; the gradients are reset right after each micro-batch's backward."""
import torch
import torch.nn as nn


def train(model, loader, micro_batch_size, epochs):
    criterion = nn.MSELoss(reduction="sum")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for epoch in range(epochs):
        for x, y in loader:
            for start in range(0, len(x), micro_batch_size):
                xb, yb = x[start:start + micro_batch_size], y[start:start + micro_batch_size]
                loss = criterion(model(xb), yb) / len(x)
                loss.backward()
                optimizer.zero_grad()  # expect: TL006
            optimizer.step()
