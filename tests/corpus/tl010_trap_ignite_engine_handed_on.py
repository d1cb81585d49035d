"""Ignite: the engine is handed to a function of another module that attaches handlers the file does not show
(one may step the optimizer at the end of the run): unknown, quiet."""
import torch
from ignite.engine import Engine

from handlers import attach_training_handlers


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
    attach_training_handlers(trainer, optimizer)
    trainer.run(loader, max_epochs=epochs)
