"""WGAN with several critic steps: the generator's loss re-runs the critic after the critic's last step."""
import torch


def train(generator, critic, loader, z_dim, n_critic=5, clip=0.01):
    opt_c = torch.optim.RMSprop(critic.parameters(), lr=5e-5)
    opt_g = torch.optim.RMSprop(generator.parameters(), lr=5e-5)
    for step, real in enumerate(loader):
        z = torch.randn(real.size(0), z_dim)
        fake = generator(z)
        critic_fake = critic(fake)
        loss_c = critic_fake.mean() - critic(real).mean()
        opt_c.zero_grad()
        loss_c.backward(retain_graph=True)
        opt_c.step()
        for p in critic.parameters():
            p.data.clamp_(-clip, clip)
        if step % n_critic == 0:
            critic_fake = critic(fake)
            loss_g = -critic_fake.mean()
            opt_g.zero_grad()
            loss_g.backward()
            opt_g.step()
