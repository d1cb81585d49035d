"""A new SGD every round, over a dict of the trainable parameters of a model built once before the loop:
the optimizer is new, the gradients are not, and nothing resets them."""
import torch
from torch import nn


def finetune(loader, lr=0.01):
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    model[0].weight.requires_grad_(False)
    for inputs, targets in loader:
        trainable = {name: p for name, p in model.named_parameters() if p.requires_grad}
        loss = nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        sgd = torch.optim.SGD(trainable.values(), lr=lr)
        sgd.step()  # expect: TL002
