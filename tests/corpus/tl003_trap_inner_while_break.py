"""Full-batch training: every batch of the epoch is backpropagated, then one step; the count is the epoch's."""
import torch
import torch.nn.functional as F


def train(model, loader, epochs):
    optimizer = torch.optim.LBFGS(model.parameters())
    for epoch in range(epochs):
        batches = iter(loader)
        optimizer.zero_grad()
        while True:
            try:
                x, y = next(batches)
            except StopIteration:
                break
            loss = F.mse_loss(model(x), y)
            loss.backward()
        optimizer.step(lambda: 0.0)
