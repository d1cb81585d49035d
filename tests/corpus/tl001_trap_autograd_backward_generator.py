"""Weighted task losses handed to torch.autograd.backward as a generator over the comprehension's own `loss`."""
import torch


def train(model, loader, optimizer, weights):
    loss = torch.zeros(())
    for x, targets in loader:
        task_losses = model(x, targets)
        optimizer.zero_grad()
        torch.autograd.backward(tuple(w * loss for w, loss in zip(weights, task_losses)))
        optimizer.step()
        loss = loss + sum(t.detach() for t in task_losses)
    return loss
