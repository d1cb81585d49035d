"""Each auxiliary loss backpropagated through `map(lambda l: ...)`; the loop's `l` is a float total for logging."""
import torch


def train(model, loader, optimizer, log_every=50):
    l = 0.0
    for step, (x, y) in enumerate(loader):
        ls = model.auxiliary_losses(x, y)
        optimizer.zero_grad()
        list(map(lambda l: l.backward(), ls))
        optimizer.step()
        l += sum(t.item() for t in ls)
        if step % log_every == 0:
            print(step, l / (step + 1))
