"""The generator is updated every `n_critic` iterations: a schedule, not accumulation."""
import torch


def train(generator, critic, loader, opt_g, opt_c, latent_dim=100, n_critic=5):
    for i, real in enumerate(loader):
        opt_c.zero_grad()
        fake = generator(torch.randn(real.size(0), latent_dim)).detach()
        loss_c = critic(fake).mean() - critic(real).mean()
        loss_c.backward()
        opt_c.step()
        if i % n_critic == 0:
            generator.zero_grad()
            loss_g = -critic(generator(torch.randn(real.size(0), latent_dim))).mean()
            loss_g.backward()
            opt_g.step()
