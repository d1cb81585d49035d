"""An Ignite-style `update(engine, batch)` nested in `train()` reads the `model` that `train()` wrapped in DDP when
`args.distributed` is set; it backpropagates every iteration and steps every `args.accum` iterations, without
`no_sync()`."""
import torch
from ignite.engine import Engine
from torch.nn.parallel import DistributedDataParallel


def train(args, model, loader):
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    if args.distributed:
        model = DistributedDataParallel(model, device_ids=[args.local_rank])

    def update(engine, batch):
        model.train()
        x, y = batch
        loss = torch.nn.functional.mse_loss(model(x), y) / args.accum  # expect: TL016
        loss.backward()
        if engine.state.iteration % args.accum == 0:  # expect: TL010
            optimizer.step()
            optimizer.zero_grad()
        return loss.item()

    trainer = Engine(update)
    trainer.run(loader, max_epochs=args.epochs)
