"""GAN epoch statistics: both running totals keep their networks' graphs alive."""
import torch
import torch.nn.functional as F


def train_epoch(G, D, loader, opt_g, opt_d, z_dim):
    g_total = 0.0
    d_total = 0.0
    for real, _ in loader:
        z = torch.randn(real.size(0), z_dim)
        fake = G(z)

        opt_d.zero_grad()
        d_real, d_fake = D(real), D(fake.detach())
        d_loss = F.binary_cross_entropy_with_logits(d_real, torch.ones_like(d_real)) + \
            F.binary_cross_entropy_with_logits(d_fake, torch.zeros_like(d_fake))
        d_loss.backward()
        opt_d.step()

        opt_g.zero_grad()
        d_gen = D(fake)
        g_loss = F.binary_cross_entropy_with_logits(d_gen, torch.ones_like(d_gen))
        g_loss.backward()
        opt_g.step()

        d_total += d_loss  # expect: TL008
        g_total = g_total + g_loss  # expect: TL008
    return g_total / len(loader), d_total / len(loader)
