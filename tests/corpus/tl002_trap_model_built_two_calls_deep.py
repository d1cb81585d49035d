"""Hyperparameter trials: the loop calls a helper that calls another, which builds the model and its optimizer for one update on every call."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, width), nn.ReLU(), nn.Linear(width, 10))

    def forward(self, x):
        return self.body(x)


def one_update(width, lr, batch, device):
    inputs, targets = batch
    model = Net(width).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss = F.cross_entropy(model(inputs.to(device)), targets.to(device))
    loss.backward()
    optimizer.step()
    return loss.item()


def trial_loss(trial, batch, device):
    return one_update(trial["width"], trial["lr"], batch, device)


def search(trials, batch, device="cpu"):
    results = []
    for trial in trials:
        results.append(trial_loss(trial, batch, device))
    return min(range(len(trials)), key=results.__getitem__)
