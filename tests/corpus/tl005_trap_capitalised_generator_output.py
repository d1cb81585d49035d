"""The target features come from a generator named `G` (an instance, not a class) run before the loop: they
carry its graph, so the retained graph is needed by the next iteration's backward."""
import torch
import torch.nn as nn


def fit(z, x, steps):
    G = nn.Linear(16, 16)
    D = nn.Linear(16, 1)
    fake = G(z)
    opt = torch.optim.SGD(D.parameters(), lr=0.01)
    for step in range(steps):
        loss = (D(fake) - D(x)).mean()
        opt.zero_grad()
        loss.backward(retain_graph=True)
        opt.step()
