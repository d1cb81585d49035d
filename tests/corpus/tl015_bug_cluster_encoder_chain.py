"""ClusterGAN: generator and encoder step every few batches, between their retained backward and the
discriminator's backward through the same generated images."""
from itertools import chain as ichain

import torch
import torch.nn as nn


def train(generator, encoder, discriminator, dataloader, sample_z, n_epochs, n_skip_iter=1, betan=10, betac=10):
    bce_loss = nn.BCELoss()
    mse_loss = nn.MSELoss()
    xe_loss = nn.CrossEntropyLoss()
    ge_chain = ichain(generator.parameters(), encoder.parameters())
    optimizer_GE = torch.optim.Adam(ge_chain, lr=1e-4, betas=(0.5, 0.9), weight_decay=2.5e-5)
    optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=1e-4, betas=(0.5, 0.9))
    for epoch in range(n_epochs):
        for i, (imgs, _) in enumerate(dataloader):
            generator.train()
            encoder.train()
            optimizer_GE.zero_grad()
            zn, zc, zc_idx = sample_z(imgs.shape[0])
            gen_imgs = generator(zn, zc)
            D_gen = discriminator(gen_imgs)
            D_real = discriminator(imgs)
            valid = torch.ones(imgs.size(0), 1)
            fake = torch.zeros(imgs.size(0), 1)
            if i % n_skip_iter == 0:
                enc_gen_zn, enc_gen_zc, enc_gen_zc_logits = encoder(gen_imgs)
                zn_loss = mse_loss(enc_gen_zn, zn)
                zc_loss = xe_loss(enc_gen_zc_logits, zc_idx)
                ge_loss = bce_loss(D_gen, valid) + betan * zn_loss + betac * zc_loss
                ge_loss.backward(retain_graph=True)
                optimizer_GE.step()  # expect: TL015
            optimizer_D.zero_grad()
            d_loss = (bce_loss(D_real, valid) + bce_loss(D_gen, fake)) / 2
            d_loss.backward()
            optimizer_D.step()
