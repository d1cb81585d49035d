"""Another function of the file binds a `model` to a DDP wrap; the loop's `model` is its own parameter, and its
one caller passes a plain module."""
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def fit(model, loader, optimizer, accum):
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x), y) / accum
        loss.backward()
        if (i + 1) % accum == 0 or i + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def main(net, loader, optimizer):
    model = net.cuda()
    fit(model, loader, optimizer, 4)


def wrap_for_serving(net):
    model = DDP(net)
    return model
