"""A GAN script of a project whose environment.yml pins pytorch 0.4.1: each scheduler steps first, the
order torch documented before 1.1."""
import torch


def train(generator, discriminator, loader, epochs):
    opt_g = torch.optim.Adam(generator.parameters(), lr=2e-4)
    opt_d = torch.optim.Adam(discriminator.parameters(), lr=2e-4)
    sched_g = torch.optim.lr_scheduler.StepLR(opt_g, step_size=10000, gamma=0.5)
    sched_d = torch.optim.lr_scheduler.StepLR(opt_d, step_size=10000, gamma=0.5)
    for epoch in range(epochs):
        for real in loader:
            sched_d.step()
            opt_d.zero_grad()
            fake = generator(torch.randn(real.size(0), 128)).detach()
            d_loss = torch.relu(1 - discriminator(real)).mean() + torch.relu(1 + discriminator(fake)).mean()
            d_loss.backward()
            opt_d.step()
            sched_g.step()
            opt_g.zero_grad()
            g_loss = -discriminator(generator(torch.randn(real.size(0), 128))).mean()
            g_loss.backward()
            opt_g.step()
