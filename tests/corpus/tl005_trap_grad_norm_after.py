"""The retained graph is used again by an input-gradient penalty later in the iteration."""
import torch


def train(model, loader, optimizer, criterion, penalty_weight=0.1):
    for x, y in loader:
        x.requires_grad_(True)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward(retain_graph=True)
        input_grad, = torch.autograd.grad(loss, x, create_graph=True)
        (penalty_weight * input_grad.pow(2).sum()).backward()
        optimizer.step()
