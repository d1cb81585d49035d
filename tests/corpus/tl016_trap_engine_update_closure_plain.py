"""The nested `update` reads `train()`'s own `model`, a plain module; a `model` that another function of the file
wraps in DDP is a different object."""
import torch
from ignite.engine import Engine
from torch.nn.parallel import DistributedDataParallel


def train(args, net, loader):
    model = net.to(args.device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)

    def update(engine, batch):
        model.train()
        x, y = batch
        loss = torch.nn.functional.mse_loss(model(x), y) / args.accum
        loss.backward()
        if engine.state.iteration % args.accum == 0:
            optimizer.step()
            optimizer.zero_grad()
        return loss.item()

    trainer = Engine(update)
    trainer.run(loader, max_epochs=args.epochs, epoch_length=args.accum * args.updates_per_epoch)


def serve(net):
    model = DistributedDataParallel(net)
    return model
