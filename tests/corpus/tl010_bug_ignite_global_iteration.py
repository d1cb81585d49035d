"""Ignite: `engine.state.iteration` counts the whole run's iterations from 1 across its epochs, so the update
steps after every `args.accum` of the run's `args.epochs * len(loader)` iterations; the handlers attached
(an evaluation at the end of each epoch, a checkpoint, a learning-rate schedule at the start of each iteration)
step nothing, so the run's last partial window is never applied."""
import torch
from ignite.engine import Engine, Events
from ignite.handlers import ModelCheckpoint
from ignite.contrib.handlers import PiecewiseLinear


def train(args, model, loader, val_loader):
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)

    def update(engine, batch):
        model.train()
        x, y = batch
        loss = torch.nn.functional.mse_loss(model(x), y) / args.accum
        loss.backward()
        if engine.state.iteration % args.accum == 0:  # expect: TL010
            optimizer.step()
            optimizer.zero_grad()
        return loss.item()

    def inference(engine, batch):
        model.eval()
        with torch.no_grad():
            x, y = batch
            return model(x), y

    trainer = Engine(update)
    evaluator = Engine(inference)
    trainer.add_event_handler(Events.EPOCH_COMPLETED, lambda _: evaluator.run(val_loader))
    scheduler = PiecewiseLinear(optimizer, "lr", [(0, args.lr), (args.epochs * len(loader), 0.0)])
    trainer.add_event_handler(Events.ITERATION_STARTED, scheduler)
    checkpoint = ModelCheckpoint(args.out, "checkpoint", n_saved=3)
    trainer.add_event_handler(Events.EPOCH_COMPLETED, checkpoint, {"model": model})
    trainer.run(loader, max_epochs=args.epochs)
