"""The epoch's length is held in `steps_in_epoch`; the last batch always steps (the short-epoch test next to it
changes nothing); and a flush after the loop under `budget <= accum`, where nothing says `budget` is the epoch's
length: not known to flush short epochs only."""
import torch
from torch import nn


def train(model, loader, accum, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        steps_in_epoch = len(loader)
        for step, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) / accum
            loss.backward()
            if (step + 1) % accum == 0 or (steps_in_epoch <= accum and (step + 1) == steps_in_epoch) \
                    or (step + 1) == steps_in_epoch:
                optimizer.step()
                optimizer.zero_grad()


def train_budget(model, loader, accum, epochs, budget):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) / accum
            loss.backward()
            if (i + 1) % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
        if budget <= accum:
            optimizer.step()
            optimizer.zero_grad()
