"""Each named parameter's gradient zeroed right before the step (meant to be after it)."""
import torch


def train(model, loader, criterion, frozen=("embed",)):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for inputs, targets in loader:
        loss = criterion(model(inputs), targets)
        loss.backward()
        for name, param in model.named_parameters():  # expect: TL006
            if param.grad is not None:
                param.grad.zero_()
        optimizer.step()
