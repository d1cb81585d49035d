"""DCGAN step: the discriminator update is right, the generator's reset sits after its backward."""
import torch
import torch.nn as nn


def train(netG, netD, dataloader, nz, device, num_epochs=5):
    criterion = nn.BCELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    for epoch in range(num_epochs):
        for i, data in enumerate(dataloader, 0):
            real = data[0].to(device)
            b_size = real.size(0)
            label = torch.full((b_size,), 1.0, device=device)

            netD.zero_grad()
            errD_real = criterion(netD(real).view(-1), label)
            errD_real.backward()
            noise = torch.randn(b_size, nz, 1, 1, device=device)
            fake = netG(noise)
            label.fill_(0.0)
            errD_fake = criterion(netD(fake.detach()).view(-1), label)
            errD_fake.backward()
            optimizerD.step()

            label.fill_(1.0)
            errG = criterion(netD(fake).view(-1), label)
            errG.backward()
            netG.zero_grad()  # expect: TL006
            optimizerG.step()
