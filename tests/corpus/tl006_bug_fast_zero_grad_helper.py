"""A "fast" set-to-None helper, called where the clipping used to be: after backward, before step."""
import torch
import torch.nn.functional as F


def fast_zero_grad(model):
    for p in model.parameters():
        p.grad = None


def train(model, loader, epochs=10, lr=1e-3):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for epoch in range(epochs):
        for x, y in loader:
            loss = F.mse_loss(model(x), y)
            loss.backward()
            fast_zero_grad(model)  # expect: TL006
            optimizer.step()
