"""GAN with one schedule per network, both stepped together after the discriminator's update."""
import torch
from torch.optim.lr_scheduler import LinearLR


def train(G, D, loader, z_dim, epochs, total_iters):
    opt_d = torch.optim.Adam(D.parameters(), lr=4e-4, betas=(0.0, 0.9))
    opt_g = torch.optim.Adam(G.parameters(), lr=1e-4, betas=(0.0, 0.9))
    sched_d = LinearLR(opt_d, start_factor=1.0, end_factor=0.0, total_iters=total_iters)
    sched_g = LinearLR(opt_g, start_factor=1.0, end_factor=0.0, total_iters=total_iters)
    for epoch in range(epochs):
        for real in loader:
            z = torch.randn(real.size(0), z_dim)
            opt_d.zero_grad()
            d_loss = torch.relu(1.0 - D(real)).mean() + torch.relu(1.0 + D(G(z).detach())).mean()
            d_loss.backward()
            opt_d.step()
            sched_d.step()
            sched_g.step()  # expect: TL009

            opt_g.zero_grad()
            g_loss = -D(G(z)).mean()
            g_loss.backward()
            opt_g.step()
