"""InfoGAN-style training: the information optimizer holds both networks' parameters, but only the
discriminator's optimizer resets: the generator's gradients pile up across iterations."""
import itertools

import torch
import torch.nn.functional as F
import torch.optim as optim


def train(G, D, loader, epochs, z_dim, n_codes):
    D_optimizer = optim.Adam(D.parameters(), lr=2e-4)
    info_optimizer = optim.Adam(itertools.chain(G.parameters(), D.parameters()), lr=2e-4)
    for epoch in range(epochs):
        for x, _ in loader:
            z = torch.rand(x.size(0), z_dim)
            code = torch.randint(0, n_codes, (x.size(0),))
            D_optimizer.zero_grad()
            fake = G(z, code)
            d_real, _ = D(x)
            d_fake, code_logits = D(fake)
            D_loss = F.softplus(-d_real).mean() + F.softplus(d_fake).mean()
            D_loss.backward(retain_graph=True)
            D_optimizer.step()

            info_loss = F.cross_entropy(code_logits, code)
            info_loss.backward()
            info_optimizer.step()  # expect: TL002
