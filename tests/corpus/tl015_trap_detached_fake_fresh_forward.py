"""DCGAN: the discriminator trains on `fake.detach()`, the generator's loss is a fresh forward after its step."""
import torch
import torch.nn as nn


def train_epoch(netG, netD, loader, nz, device):
    criterion = nn.BCELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    for real, _ in loader:
        real = real.to(device)
        b = real.size(0)
        noise = torch.randn(b, nz, 1, 1, device=device)
        fake = netG(noise)

        netD.zero_grad()
        out_real = netD(real).view(-1)
        err_real = criterion(out_real, torch.ones(b, device=device))
        err_real.backward()
        out_fake = netD(fake.detach()).view(-1)
        err_fake = criterion(out_fake, torch.zeros(b, device=device))
        err_fake.backward(retain_graph=True)
        confidence = 0.01 * out_fake.pow(2).mean()  # goes through the retained graph again, before the step
        confidence.backward()
        optimizerD.step()

        netG.zero_grad()
        output = netD(fake).view(-1)
        errG = criterion(output, torch.ones(b, device=device))
        errG.backward()
        optimizerG.step()
