"""WGAN-GP: the penalty's `autograd.grad` needs the graph again (`create_graph=True`)."""
import torch
from torch import autograd


def train_critic(critic, generator, loader, c_opt, latent_dim=128, lambda_gp=10.0):
    for real in loader:
        fake = generator(torch.randn(real.size(0), latent_dim)).detach()
        c_opt.zero_grad()
        c_real = critic(real).mean()
        c_fake = critic(fake).mean()
        alpha = torch.rand(real.size(0), 1, 1, 1)
        mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        mixed_scores = critic(mixed)
        grads = autograd.grad(mixed_scores.sum(), mixed, create_graph=True, retain_graph=True)[0]
        penalty = ((grads.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
        loss = c_fake - c_real + lambda_gp * penalty
        loss.backward()
        c_opt.step()
