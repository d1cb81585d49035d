"""Two losses per batch: a GAN (correct retain_graph use), a two-model loss split to save memory,
and a regression loop that retains its graph for nothing.

Carries TL005 once, in `fit_regressor`; the other loops are correct and must stay quiet.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


def train_gan(generator, discriminator, loader, g_opt, d_opt, latent: int = 16):
    for real in loader:
        noise = torch.randn(real.size(0), latent)
        fake = generator(noise)
        ones, zeros = torch.ones(real.size(0), 1), torch.zeros(real.size(0), 1)
        d_opt.zero_grad()
        d_loss = F.binary_cross_entropy_with_logits(discriminator(real), ones) + \
            F.binary_cross_entropy_with_logits(discriminator(fake), zeros)
        d_loss.backward(retain_graph=True)
        d_opt.step()
        g_opt.zero_grad()
        g_loss = F.binary_cross_entropy_with_logits(discriminator(fake), ones)
        g_loss.backward()
        g_opt.step()


def train_two_models(model1, model2, train_loader, loss_fn1, loss_fn2, optimizer):
    # Each loss backpropagates on its own: only one graph is alive at a time.
    for idx, (xs, ys) in enumerate(train_loader):
        optimizer.zero_grad()
        loss1 = loss_fn1(model1(xs), ys)
        loss1.backward()
        loss2 = loss_fn2(model2(xs), ys)
        loss2.backward()
        optimizer.step()


def fit_regressor(model: nn.Module, batches, epochs: int = 10):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    criterion = nn.SmoothL1Loss()
    for _ in range(epochs):
        for x, y in batches:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward(retain_graph=True)
            optimizer.step()
    return model
