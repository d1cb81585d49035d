"""Softmax GAN: both losses share the partition function of one discriminator forward."""
from math import log

import numpy as np
import torch


def train(generator, discriminator, dataloader, latent_dim, n_epochs, Tensor):
    optimizer_G = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    for epoch in range(n_epochs):
        for i, (imgs, _) in enumerate(dataloader):
            optimizer_G.zero_grad()
            optimizer_D.zero_grad()
            batch_size = imgs.shape[0]
            g_target = 1 / (batch_size * 2)
            d_target = 1 / batch_size
            real_imgs = imgs.type(Tensor)
            z = Tensor(np.random.normal(0, 1, (batch_size, latent_dim)))
            gen_imgs = generator(z)
            d_real = discriminator(real_imgs)
            d_fake = discriminator(gen_imgs)
            Z = torch.sum(torch.exp(-d_real)) + torch.sum(torch.exp(-d_fake))
            d_loss = d_target * torch.sum(d_real) + log(Z)
            d_loss.backward(retain_graph=True)
            optimizer_D.step()  # expect: TL015
            g_loss = g_target * (torch.sum(d_real) + torch.sum(d_fake)) + log(Z)
            g_loss.backward()
            optimizer_G.step()
