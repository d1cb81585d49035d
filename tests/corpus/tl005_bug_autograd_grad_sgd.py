"""Hand-written SGD with `torch.autograd.grad`; nothing uses the graph afterwards."""
import torch
import torch.nn.functional as F


def fit(params, forward, loader, lr=0.05):
    for x, y in loader:
        loss = F.mse_loss(forward(params, x), y)
        grads = torch.autograd.grad(loss, params, retain_graph=True)  # expect: TL005
        with torch.no_grad():
            for p, g in zip(params, grads):
                p -= lr * g
