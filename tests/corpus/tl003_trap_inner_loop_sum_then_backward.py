"""The micro-batch losses are averaged in the inner loop and backpropagated once after it."""
import torch.nn.functional as F


def train(model, optimizer, batches, steps, n_micro):
    for step in range(steps):
        total = 0.0
        for _ in range(n_micro):
            x, y = next(batches)
            total = total + F.mse_loss(model(x), y)
        (total / n_micro).backward()
        optimizer.step()
        optimizer.zero_grad()
