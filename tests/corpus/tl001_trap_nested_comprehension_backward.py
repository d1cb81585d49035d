"""Per-group, per-scale losses backpropagated by a nested comprehension while `l` sums the epoch's log."""
import torch


def train(model, loader, optimizer, scales=(1.0, 0.5)):
    l = 0.0
    for batch in loader:
        groups = [[model.loss(chunk, scale) for scale in scales] for chunk in batch.split(8)]
        optimizer.zero_grad()
        [l.backward() for group in groups for l in group]
        optimizer.step()
        l += sum(float(l) for group in groups for l in group)
    return l
