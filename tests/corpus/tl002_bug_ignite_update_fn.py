"""Ignite: the process function does forward, backward and step; nothing resets the gradients."""
import torch
from ignite.engine import Engine, Events
from torch import nn


def run(model, train_loader, epochs=10):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    criterion = nn.CrossEntropyLoss()

    def update_fn(engine, batch):
        model.train()
        x, y = batch
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()  # expect: TL002
        return loss.item()

    trainer = Engine(update_fn)

    @trainer.on(Events.EPOCH_COMPLETED)
    def log(engine):
        print(engine.state.epoch, engine.state.output)

    trainer.run(train_loader, max_epochs=epochs)
