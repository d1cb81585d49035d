"""A helper of this file returns the running mean detached in the slot that is fed back next iteration."""
import torch
from torch import autograd


def path_regularize(fake_img, latents, mean_path_length, decay=0.01):
    noise = torch.randn_like(fake_img)
    (grad,) = autograd.grad((fake_img * noise).sum(), latents, create_graph=True)
    path_lengths = torch.sqrt(grad.pow(2).sum(2).mean(1))
    path_mean = mean_path_length + decay * (path_lengths.mean() - mean_path_length)
    path_penalty = (path_lengths - path_mean).pow(2).mean()
    return path_penalty, path_mean.detach(), path_lengths


def train(generator, g_optim, sample_z, iterations, weight):
    mean_path_length = 0
    for idx in range(iterations):
        fake_img, latents = generator(sample_z(), return_latents=True)
        path_loss, mean_path_length, path_lengths = path_regularize(fake_img, latents, mean_path_length)
        generator.zero_grad()
        (weight * path_loss).backward()
        g_optim.step()
