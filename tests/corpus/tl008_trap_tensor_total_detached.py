"""Tensor totals done right: the loss is detached (or made a number) before it is added, and a total made with
`requires_grad=True` is a differentiable sum that is backpropagated after the loop (TL001's business, not
history kept by mistake)."""
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, device):
    loss_accum = torch.zeros(1, device=device).squeeze_()
    seen = torch.tensor(0.0)
    for features, target in loader:
        loss = F.cross_entropy(model(features), target)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        loss_accum += loss.detach() * len(target)
        seen += loss.item()
    return loss_accum, seen


def meta_step(model, tasks, meta_optimizer):
    meta_loss = torch.zeros((), requires_grad=True)
    for support, query in tasks:
        adapted = model.adapt(support)
        meta_loss = meta_loss + F.mse_loss(adapted(query[0]), query[1])
    meta_optimizer.zero_grad()
    meta_loss.backward()
    meta_optimizer.step()


def evaluate(model, loader):
    total = torch.zeros(())
    with torch.no_grad():
        for features, target in loader:
            total += F.cross_entropy(model(features), target)
    return total
