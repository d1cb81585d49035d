"""A GAN that also mines hard real samples: per-sample discriminator losses, and a shared fake forward.

Carries TL015 once, in `train_gan` (the discriminator steps between the two backwards through
`d_fake`), and TL018 once, in `train_hard_miner` (per-sample losses backpropagated unreduced);
`score_real` and the generator's warm-up are correct and must stay quiet.
"""

import torch
import torch.nn as nn


def warm_up_generator(generator, targets, epochs: int = 5, lr: float = 1e-3):
    # Per-sample reconstruction losses, reduced before the backward.
    criterion = nn.L1Loss(reduction="none")
    optimizer = torch.optim.Adam(generator.parameters(), lr=lr)
    for _ in range(epochs):
        for noise, target in targets:
            optimizer.zero_grad()
            per_sample = criterion(generator(noise), target).flatten(1).mean(dim=1)
            per_sample.mean().backward()
            optimizer.step()


def train_gan(generator, discriminator, loader, latent: int = 64):
    bce = nn.BCEWithLogitsLoss()
    g_opt = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    d_opt = torch.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    for real in loader:
        ones, zeros = torch.ones(real.size(0), 1), torch.zeros(real.size(0), 1)
        fake = generator(torch.randn(real.size(0), latent))
        d_fake = discriminator(fake)
        d_opt.zero_grad()
        d_loss = bce(discriminator(real), ones) + bce(d_fake, zeros)
        d_loss.backward(retain_graph=True)
        d_opt.step()
        g_opt.zero_grad()
        g_loss = bce(d_fake, ones)
        g_loss.backward()
        g_opt.step()


def train_hard_miner(discriminator, real_loader, optimizer, keep: int = 8):
    criterion = nn.BCEWithLogitsLoss(reduction="none")
    hardest = []
    for real in real_loader:
        optimizer.zero_grad()
        losses = criterion(discriminator(real), torch.ones(real.size(0), 1)).squeeze(1)
        hardest.extend(losses.detach().topk(min(keep, len(losses))).indices.tolist())
        losses.backward()
        optimizer.step()
    return hardest


def score_real(discriminator, loader):
    criterion = nn.BCEWithLogitsLoss(reduction="none")
    with torch.no_grad():
        return torch.cat([criterion(discriminator(x), torch.ones(x.size(0), 1)) for x in loader])
