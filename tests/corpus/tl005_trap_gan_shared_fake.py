"""GAN: the discriminator's backward retains, the generator's goes through the graph again."""
import torch
import torch.nn as nn


def train(generator, discriminator, loader, latent_dim=64):
    bce = nn.BCELoss()
    g_opt = torch.optim.Adam(generator.parameters(), lr=2e-4)
    d_opt = torch.optim.Adam(discriminator.parameters(), lr=2e-4)
    for real in loader:
        ones = torch.ones(real.size(0), 1)
        zeros = torch.zeros(real.size(0), 1)
        fake = generator(torch.randn(real.size(0), latent_dim))
        d_opt.zero_grad()
        d_loss = bce(discriminator(fake), zeros) + bce(discriminator(real), ones)
        d_loss.backward(retain_graph=True)
        d_opt.step()
        g_opt.zero_grad()
        g_loss = bce(discriminator(fake), ones)
        g_loss.backward()
        g_opt.step()
