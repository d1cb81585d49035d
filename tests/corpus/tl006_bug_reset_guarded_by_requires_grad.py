"""Every trainable parameter's gradient dropped between backward and step: the tests ask whether a parameter trains
and whether it has a gradient, not what the gradient holds, so all of them go."""
import torch


def train(model, loader, criterion):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for inputs, targets in loader:
        loss = criterion(model(inputs), targets)
        loss.backward()
        for p in model.parameters():  # expect: TL006
            if p.requires_grad and p.grad is not None:
                p.grad = None
        optimizer.step()
