"""The mutual-information step's optimizer is built over a list unpacking both networks' parameters;
the generator's and the discriminator's optimizers reset both every iteration."""
import torch
import torch.nn.functional as F
from torch import optim


def train(netG, netD, loader, epochs, nz, n_codes, device):
    optD = optim.Adam(netD.parameters(), lr=2e-4)
    optG = optim.Adam(netG.parameters(), lr=1e-3)
    params = [*netG.parameters(), *netD.parameters()]
    optInfo = optim.Adam(params, lr=2e-4)
    for epoch in range(epochs):
        for real, _ in loader:
            real = real.to(device)
            noise = torch.randn(real.size(0), nz, device=device)
            codes = torch.randint(0, n_codes, (real.size(0),), device=device)

            optD.zero_grad()
            fake = netG(noise, codes)
            d_real, _ = netD(real)
            d_fake, _ = netD(fake.detach())
            loss_d = F.softplus(-d_real).mean() + F.softplus(d_fake).mean()
            loss_d.backward()
            optD.step()

            optG.zero_grad()
            d_fake, q_logits = netD(fake)
            loss_g = F.softplus(-d_fake).mean()
            loss_info = F.cross_entropy(q_logits, codes)
            (loss_g + loss_info).backward()
            optG.step()
            optInfo.step()
