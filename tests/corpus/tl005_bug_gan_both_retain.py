"""GAN where the generator's backward, the last through the graph, still retains it."""
import torch
import torch.nn as nn


def train(generator, discriminator, loader, latent_dim=100, device="cpu"):
    bce = nn.BCEWithLogitsLoss()
    opt_g = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    for real, _ in loader:
        real = real.to(device)
        ones = torch.ones(real.size(0), 1, device=device)
        zeros = torch.zeros(real.size(0), 1, device=device)
        fake = generator(torch.randn(real.size(0), latent_dim, device=device))

        opt_d.zero_grad()
        d_loss = bce(discriminator(real), ones) + bce(discriminator(fake), zeros)
        d_loss.backward(retain_graph=True)
        opt_d.step()

        opt_g.zero_grad()
        g_loss = bce(discriminator(fake), ones)
        g_loss.backward(retain_graph=True)  # expect: TL005
        opt_g.step()
