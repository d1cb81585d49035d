"""`train_step` resets, backpropagates and steps: a complete update per call."""
import torch
from torch import nn


def train_step(net, batch, opt, loss_fn):
    inputs, labels = batch
    opt.zero_grad()
    loss = loss_fn(net(inputs), labels)
    loss.backward()
    opt.step()
    return loss.item()


def main(loader, epochs=5):
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        for batch in loader:
            train_step(model, batch, optimizer, criterion)
