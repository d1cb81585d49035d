"""Logging the loss and evaluating, where small slips cost memory or crash the run.

Carries TL008 (`running_loss += loss` keeps every iteration's graph alive) in `train`, and
TL011 (a `@torch.no_grad()` meant for evaluation sits on a training function) in
`train_decorated`.
"""

import torch
import torch.nn as nn
from tqdm import tqdm


@torch.no_grad()
def evaluate(model, loader, criterion):
    model.eval()
    total = 0.0
    for inputs, labels in loader:
        total += criterion(model(inputs), labels).item()
    return total / len(loader)


def train(model, loader, val_loader, epochs: int = 10):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for epoch in range(epochs):
        model.train()
        running_loss = 0.0
        for inputs, labels in tqdm(loader, desc=f"epoch {epoch}"):
            optimizer.zero_grad()
            loss = criterion(model(inputs), labels)
            loss.backward()
            optimizer.step()
            running_loss += loss
        print(f"train {running_loss / len(loader):.4f}  val {evaluate(model, val_loader, criterion):.4f}")


@torch.no_grad()
def train_decorated(model, loader, optimizer):
    criterion = nn.CrossEntropyLoss()
    for inputs, labels in loader:
        optimizer.zero_grad()
        loss = criterion(model(inputs), labels)
        loss.backward()
        optimizer.step()
