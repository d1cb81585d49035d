"""A retained differentiation inside the loop whose graph a value outliving the iteration still holds: a total
backpropagated after the loop, an attribute, an element kept for later. Dropping `retain_graph` would make that
later backward fail."""
import torch
import torch.nn.functional as F
from torch import autograd


def penalised(model, optimizer, chunks):
    total = 0.0
    norms = []
    for x, y in chunks:
        part = F.mse_loss(model(x), y)
        grads = autograd.grad(part, model.parameters(), retain_graph=True)
        norms.append(sum(g.norm() for g in grads).item())
        total = total + part
    optimizer.zero_grad()
    (total / len(chunks)).backward()
    optimizer.step()
    return norms


class Probe:
    def __init__(self, model):
        self.model = model
        self.last = None

    def run(self, chunks, kept):
        for i, (x, y) in enumerate(chunks):
            part = F.mse_loss(self.model(x), y)
            part.backward(retain_graph=True)
            kept[i] = part * 2
            self.last = part

    def finish(self):
        self.last.backward()
