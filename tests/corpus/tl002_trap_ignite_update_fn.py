"""Ignite: the process function resets, backpropagates and steps."""
import torch
from ignite.engine import Engine
from torch import nn


def run(model, train_loader, epochs=10):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    criterion = nn.CrossEntropyLoss()

    def train_step(engine, batch):
        model.train()
        optimizer.zero_grad()
        x, y = batch
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.item()

    trainer = Engine(train_step)
    trainer.run(train_loader, max_epochs=epochs)
