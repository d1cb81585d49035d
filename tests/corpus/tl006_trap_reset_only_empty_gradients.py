"""Between backward and step, only the gradients a test picks are dropped: those that hold nothing (a sampled
sub-network leaves its other branches at zero, Cream's CDARTS), or those that overflowed. The test reads each
gradient's values, so the step still applies every other gradient: no reset of the model's gradients."""
import torch
import torch.nn as nn


def pretrain(model, loader, criterion, optimizer, grad_clip):
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        for p in model.module.parameters():
            if p.grad is not None and p.grad.sum() == 0:
                p.grad = None
        nn.utils.clip_grad_norm_(model.module.parameters(), grad_clip)
        optimizer.step()


def train_all_zero(model, loader, criterion, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        for name, param in model.named_parameters():
            if param.grad is not None and torch.all(param.grad == 0):
                param.grad = None
        optimizer.step()


def train_skip_overflow(model, loader, criterion, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        for p in model.parameters():
            if p.grad is None:
                continue
            if not torch.isfinite(p.grad).all():
                p.grad.zero_()
        optimizer.step()


def train_nothing_there(model, loader, criterion, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        for p in model.parameters():
            if p.grad is not None:
                if not p.grad.abs().sum():
                    p.grad = None
        optimizer.step()
