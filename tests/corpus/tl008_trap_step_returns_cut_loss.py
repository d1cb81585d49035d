"""Step functions that backpropagate a loss but hand back something cut from its graph, or another value: the
loss made a number after the backward, a loss rebound on some path before the `return`, a fresh evaluation;
and a total that is differentiated on purpose later (a function declaring it `global` backpropagates it)."""
import torch
import torch.nn.functional as F


def step_item(model, optimizer, x, y):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    loss = loss.item()
    return loss


def step_maybe_cut(model, optimizer, x, y, log):
    loss = model(x).sum() * 0 + F.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if log:
        loss = loss.detach()
    else:
        loss = 0.0
    return loss


def step_then_eval(model, optimizer, x, y):
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        loss = model(x).pow(2).mean()
    return loss


def train(model, optimizer, loader):
    a, b, c = 0.0, 0.0, 0.0
    for x, y in loader:
        a += step_item(model, optimizer, x, y)
        loss = step_maybe_cut(model, optimizer, x, y, True)
        b += loss
        evaluated = step_then_eval(model, optimizer, x, y)
        c += evaluated
    return a, b, c


def meta_step(model, optimizer, x):
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss


meta_total = 0.0
for x in loader:
    loss = meta_step(model, optimizer, x)
    meta_total = meta_total + loss


def outer_update():
    global meta_total
    meta_total.backward()
    outer_optimizer.step()
