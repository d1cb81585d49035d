"""Ignite: the process function reads the engine under another name (`eng.state.iteration`); the one handler,
decorated with `@trainer.on(Events.EPOCH_COMPLETED)`, only prints the epoch: the run's last partial window of
`accum` iterations is never applied."""
import torch
from ignite.engine import Engine, Events

accum = 4


def main(model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def step(eng, batch):
        x, y = batch
        (torch.nn.functional.cross_entropy(model(x), y) / accum).backward()
        if eng.state.iteration % accum == 0:  # expect: TL010
            optimizer.step()
            optimizer.zero_grad()

    trainer = Engine(step)

    @trainer.on(Events.EPOCH_COMPLETED)
    def log(engine):
        print("epoch", engine.state.epoch, "done")

    trainer.run(loader, max_epochs=5)
