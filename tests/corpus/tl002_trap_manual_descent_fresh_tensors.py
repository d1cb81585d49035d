"""Updates by hand whose gradient starts afresh on every iteration: the tensor is made anew in the iteration (an
adversarial perturbation detached each step, a loop over the tensors themselves), the gradient comes from
`torch.autograd.grad` instead of `.grad`, the update runs only on some iterations, or before the backward that
would feed it."""
import torch


def attack(model, x, y, criterion, steps=10, alpha=0.01):
    x_adv = x.clone()
    for _ in range(steps):
        x_adv = x_adv.detach().requires_grad_()
        loss = criterion(model(x_adv), y)
        loss.backward()
        x_adv.data += alpha * x_adv.grad.sign()
    return x_adv


def functional(w, loader, lr=0.1):
    for x, y in loader:
        loss = ((w * x - y) ** 2).mean()
        (g,) = torch.autograd.grad(loss, w)
        with torch.no_grad():
            w -= lr * g


def every_other(w, loader, lr=0.1):
    for i, (x, y) in enumerate(loader):
        ((w * x - y) ** 2).mean().backward()
        if i % 2 == 1:
            with torch.no_grad():
                w -= lr * w.grad
            w.grad.zero_()


def per_tensor(tensors, x, y, lr=0.1):
    for t in tensors:
        ((t * x - y) ** 2).mean().backward()
        with torch.no_grad():
            t -= lr * t.grad


def statistics(model, loader, criterion, fisher):
    for x, y in loader:
        model.zero_grad()
        criterion(model(x), y).backward()
        for name, p in model.named_parameters():
            fisher[name] += p.grad ** 2
