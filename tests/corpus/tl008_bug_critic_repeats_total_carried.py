"""WGAN critic updated n_critic times per batch, its losses summed into a total set once before training and never
reset: every batch's graphs pile up."""
import torch


def train(generator, critic, opt_c, loader, n_critic, z_dim):
    critic_total = 0.0
    for real in loader:
        for _ in range(n_critic):
            fake = generator(torch.randn(real.size(0), z_dim)).detach()
            loss_c = critic(fake).mean() - critic(real).mean()
            opt_c.zero_grad()
            loss_c.backward()
            opt_c.step()
            critic_total += loss_c  # expect: TL008
    return critic_total
