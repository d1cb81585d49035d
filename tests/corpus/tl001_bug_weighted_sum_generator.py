"""A weighted sum over tasks, written with a generator, added to the total that is backpropagated each step."""
import torch


def train(model, tasks, weights, loader):
    total = torch.zeros(())
    for x, y in loader:
        losses = [task(model(x), y) for task in tasks]
        total = total + sum(w * l for w, l in zip(weights, losses))
        total.backward(retain_graph=True)  # expect: TL001
