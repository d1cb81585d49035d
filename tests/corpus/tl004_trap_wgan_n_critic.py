"""WGAN: the critic steps every batch, the generator every `n_critic` batches."""
import torch
from torch.autograd import Variable

Tensor = torch.FloatTensor


def train(opt, generator, discriminator, dataloader):
    optimizer_G = torch.optim.RMSprop(generator.parameters(), lr=opt.lr)
    optimizer_D = torch.optim.RMSprop(discriminator.parameters(), lr=opt.lr)
    batches_done = 0
    for epoch in range(opt.n_epochs):
        for i, (imgs, _) in enumerate(dataloader):
            real_imgs = Variable(imgs.type(Tensor))
            optimizer_D.zero_grad()
            z = Variable(Tensor(torch.randn(imgs.shape[0], opt.latent_dim)))
            fake_imgs = generator(z).detach()
            loss_D = -torch.mean(discriminator(real_imgs)) + torch.mean(discriminator(fake_imgs))
            loss_D.backward()
            optimizer_D.step()
            for p in discriminator.parameters():
                p.data.clamp_(-opt.clip_value, opt.clip_value)
            if i % opt.n_critic == 0:
                optimizer_G.zero_grad()
                gen_imgs = generator(z)
                loss_G = -torch.mean(discriminator(gen_imgs))
                loss_G.backward()
                optimizer_G.step()
                batches_done += opt.n_critic
