"""Two optimizers, two schedulers: each scheduler steps after its own optimizer."""
import torch
from torch.optim.lr_scheduler import ExponentialLR


def train(G, D, loader, z_dim, epochs):
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.0, 0.9))
    opt_g = torch.optim.Adam(G.parameters(), lr=1e-4, betas=(0.0, 0.9))
    sched_d = ExponentialLR(opt_d, gamma=0.99999)
    sched_g = ExponentialLR(opt_g, gamma=0.99999)
    for epoch in range(epochs):
        for real in loader:
            z = torch.randn(real.size(0), z_dim)
            opt_d.zero_grad()
            d_loss = torch.relu(1.0 - D(real)).mean() + torch.relu(1.0 + D(G(z).detach())).mean()
            d_loss.backward()
            opt_d.step()
            sched_d.step()

            opt_g.zero_grad()
            g_loss = -D(G(z)).mean()
            g_loss.backward()
            opt_g.step()
            sched_g.step()
