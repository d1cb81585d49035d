"""Indices that do not follow the micro-batch's data: positions of a mask built once before the loop, of a
mask drawn at random, and a fixed range. Each selects as many elements in every micro-batch, so the mean
over them divided by the accumulation count is the window's mean."""
import torch
import torch.nn.functional as F


def train_fixed_region(model, loader, optimizer, accum, width):
    region = torch.zeros(width, dtype=torch.bool)
    region[: width // 2] = True
    ids = torch.nonzero(region).view(-1)
    for step, (x, y) in enumerate(loader):
        out = model(x)
        loss = F.mse_loss(out.t()[ids], y.t()[ids])
        loss = loss / accum
        loss.backward()
        if (step + 1) % accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def train_random_positions(model, loader, optimizer, accum):
    for step, (x, y) in enumerate(loader):
        logits = model(x)
        drawn = torch.nonzero(torch.rand(y.view(-1).shape) < 0.15).view(-1)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1))[drawn], y.view(-1)[drawn])
        loss = loss / accum
        loss.backward()
        if (step + 1) % accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def train_first_positions(model, loader, optimizer, accum, count):
    for step, (x, y) in enumerate(loader):
        logits = model(x)
        first = torch.arange(count)
        loss = F.cross_entropy(logits.transpose(0, 1)[first].flatten(0, 1), y.transpose(0, 1)[first].flatten())
        loss = loss / accum
        loss.backward()
        if (step + 1) % accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
