"""InfoGAN: the information optimizer holds G's and D's parameters; the two GAN optimizers reset both each iteration."""
import itertools

import torch
import torch.nn as nn
import torch.optim as optim

from models import Discriminator, Generator


class InfoGAN:
    def __init__(self, args):
        self.G = Generator(args.z_dim, args.len_code)
        self.D = Discriminator(args.len_code)
        self.G_optimizer = optim.Adam(self.G.parameters(), lr=args.lrG, betas=(0.5, 0.999))
        self.D_optimizer = optim.Adam(self.D.parameters(), lr=args.lrD, betas=(0.5, 0.999))
        self.info_optimizer = optim.Adam(itertools.chain(self.G.parameters(), self.D.parameters()), lr=args.lrD)
        self.BCE_loss = nn.BCELoss()
        self.CE_loss = nn.CrossEntropyLoss()

    def train(self, loader, epochs, batch_size, z_dim, len_code):
        ones, zeros = torch.ones(batch_size, 1), torch.zeros(batch_size, 1)
        for epoch in range(epochs):
            for x_, _ in loader:
                z_ = torch.rand((batch_size, z_dim))
                code = torch.randint(0, len_code, (batch_size,))
                self.D_optimizer.zero_grad()
                D_real, _ = self.D(x_)
                G_ = self.G(z_, code)
                D_fake, _ = self.D(G_)
                D_loss = self.BCE_loss(D_real, ones) + self.BCE_loss(D_fake, zeros)
                D_loss.backward()
                self.D_optimizer.step()

                self.G_optimizer.zero_grad()
                G_ = self.G(z_, code)
                D_fake, D_code = self.D(G_)
                G_loss = self.BCE_loss(D_fake, ones)
                G_loss.backward(retain_graph=True)

                info_loss = self.CE_loss(D_code, code)
                info_loss.backward()
                self.G_optimizer.step()
                self.info_optimizer.step()
