"""DCGAN: the discriminator is reset through its module, the generator never is."""
import torch
import torch.nn as nn
import torch.optim as optim

from models import Discriminator, Generator

nz, lr, beta1 = 100, 2e-4, 0.5
real_label, fake_label = 1.0, 0.0


def train(dataloader, num_epochs, device):
    netD = Discriminator().to(device)
    netG = Generator(nz).to(device)
    criterion = nn.BCELoss()
    optimizerD = optim.Adam(netD.parameters(), lr=lr, betas=(beta1, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=lr, betas=(beta1, 0.999))
    for epoch in range(num_epochs):
        for i, data in enumerate(dataloader, 0):
            # (1) Update D: maximize log(D(x)) + log(1 - D(G(z)))
            netD.zero_grad()
            real = data[0].to(device)
            b_size = real.size(0)
            label = torch.full((b_size,), real_label, dtype=torch.float, device=device)
            output = netD(real).view(-1)
            errD_real = criterion(output, label)
            errD_real.backward()
            noise = torch.randn(b_size, nz, 1, 1, device=device)
            fake = netG(noise)
            label.fill_(fake_label)
            output = netD(fake.detach()).view(-1)
            errD_fake = criterion(output, label)
            errD_fake.backward()
            optimizerD.step()
            # (2) Update G: maximize log(D(G(z)))
            label.fill_(real_label)
            output = netD(fake).view(-1)
            errG = criterion(output, label)
            errG.backward()
            optimizerG.step()  # expect: TL002
            if i % 50 == 0:
                print(f"[{epoch}][{i}] Loss_D {(errD_real + errD_fake).item():.4f} Loss_G {errG.item():.4f}")
