"""Factories that are not DDP ones: one wraps in `DataParallel` (one process: no all-reduce to save), one hands
back the module a DDP wraps, one wraps only when asked (the code does not say which the loop gets); the DDP
model of a factory that the loop does not run (the teacher); and a DDP model from a factory stepped on every
micro-batch."""
import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def data_parallel(model):
    return nn.DataParallel(model)


def de_parallel(model):
    return model.module if isinstance(model, DDP) else model


def maybe_ddp(model, distributed):
    if distributed:
        return DDP(model)
    return model


def smart_ddp(model):
    return DDP(model, device_ids=[torch.cuda.current_device()])


def train_dp(net, loader, accum):
    model = data_parallel(net)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for i, (x, y) in enumerate(loader):
        (nn.functional.cross_entropy(model(x), y) / accum).backward()
        if (i + 1) % accum == 0 or i + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def train_unwrapped(net, loader, accum):
    model = de_parallel(smart_ddp(net))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for i, (x, y) in enumerate(loader):
        (nn.functional.cross_entropy(model(x), y) / accum).backward()
        if (i + 1) % accum == 0 or i + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def train_maybe(net, loader, accum, distributed):
    model = maybe_ddp(net, distributed)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for i, (x, y) in enumerate(loader):
        (nn.functional.cross_entropy(model(x), y) / accum).backward()
        if (i + 1) % accum == 0 or i + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def distill(student, teacher, loader, accum):
    teacher = smart_ddp(teacher)
    optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
    for i, (x, y) in enumerate(loader):
        with torch.no_grad():
            target = teacher(x)
        (nn.functional.mse_loss(student(x), target) / accum).backward()
        if (i + 1) % accum == 0 or i + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def train_every_step(net, loader):
    model = smart_ddp(net)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        optimizer.zero_grad()
