"""A window counted since the last step over 64 micro-batches, 8 at a time: the last window is whole."""
import torch

xs = torch.randn(64, 4, 10)
ys = torch.randn(64, 4, 1)


def train(model, optimizer):
    last = -1
    for step in range(64):
        loss = torch.nn.functional.mse_loss(model(xs[step]), ys[step]) / 8
        loss.backward()
        if step - last >= 8:
            optimizer.step()
            optimizer.zero_grad()
            last = step
