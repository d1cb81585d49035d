"""DDP comes through `tools/amp.py`, which imports it again from torch, and the forward runs under
`mixed_precision(...)`, which `tools/amp.py` imports again from `torch.cuda.amp`: an autocast, which leaves DDP's
synchronisation alone, so every micro-batch all-reduces. Under `quiet_reduce(model)` (a switch of another
package, renamed) what happens is unknown: no finding."""
import torch

from tools.amp import DistributedDataParallel, mixed_precision, quiet_reduce


def train(net, loader, optimizer, accum, rank):
    model = DistributedDataParallel(net, device_ids=[rank])
    for i, (x, y) in enumerate(loader):
        with mixed_precision():
            loss = torch.nn.functional.cross_entropy(model(x), y) / accum  # expect: TL016
        loss.backward()
        if (i + 1) % accum == 0 or i + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def train_quietly(net, loader, optimizer, accum, rank):
    model = DistributedDataParallel(net, device_ids=[rank])
    for i, (x, y) in enumerate(loader):
        with quiet_reduce(model):
            loss = torch.nn.functional.cross_entropy(model(x), y) / accum
        loss.backward()
        if (i + 1) % accum == 0 or i + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
