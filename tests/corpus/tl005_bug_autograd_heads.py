"""Two heads backpropagated together through `autograd.backward`, graph retained."""
import torch
from torch import autograd
from torch.nn import functional as F


def train(trunk, head_a, head_b, loader, params):
    optimizer = torch.optim.SGD(params, lr=0.01)
    for x, (y_a, y_b) in loader:
        optimizer.zero_grad()
        shared = trunk(x)
        loss_a = F.cross_entropy(head_a(shared), y_a)
        loss_b = F.mse_loss(head_b(shared), y_b)
        autograd.backward([loss_a, loss_b], retain_graph=True)  # expect: TL005
        optimizer.step()
