"""Ignite: a handler of another module is attached at `Events.COMPLETED`; what it does is unknown: quiet."""
import torch
from ignite.engine import Engine, Events

import callbacks


def train(model, loader, accum, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def update(engine, batch):
        x, y = batch
        loss = torch.nn.functional.mse_loss(model(x), y) / accum
        loss.backward()
        if engine.state.iteration % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
        return loss.item()

    trainer = Engine(update)
    trainer.add_event_handler(Events.COMPLETED, callbacks.finish)
    trainer.run(loader, max_epochs=epochs)
