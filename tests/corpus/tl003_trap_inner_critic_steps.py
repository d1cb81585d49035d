"""WGAN: `n_critic` critic updates per generator update, each critic update a step of its own."""
import torch


def train(generator, critic, loader, g_opt, d_opt, n_critic, z_dim, steps):
    data = iter(loader)
    for step in range(steps):
        for _ in range(n_critic):
            real = next(data)
            fake = generator(torch.randn(real.size(0), z_dim)).detach()
            d_loss = critic(fake).mean() - critic(real).mean()
            d_opt.zero_grad()
            d_loss.backward()
            d_opt.step()
        g_loss = -critic(generator(torch.randn(64, z_dim))).mean()
        g_opt.zero_grad()
        g_loss.backward()
        g_opt.step()
