"""GAN whose generator reset sits between the discriminator's backward and step: other parameters."""
import torch
import torch.nn.functional as F


def train(generator, discriminator, loader, latent_dim, epochs):
    opt_g = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    for epoch in range(epochs):
        for real, _ in loader:
            z = torch.randn(real.size(0), latent_dim)
            fake = generator(z)

            opt_d.zero_grad()
            real_logits = discriminator(real)
            fake_logits = discriminator(fake.detach())
            d_loss = F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits)) + \
                F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
            d_loss.backward()
            opt_g.zero_grad()
            opt_d.step()

            gen_logits = discriminator(fake)
            g_loss = F.binary_cross_entropy_with_logits(gen_logits, torch.ones_like(gen_logits))
            g_loss.backward()
            opt_g.step()
