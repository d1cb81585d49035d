"""InfoGAN-style trainer: the generator's update runs G and D again, so the discriminator's graph is never reused."""
import numpy as np
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, G, D, loader, batch_size=64, z_dim=62):
        self.G, self.D = G, D
        self.loader = loader
        self.batch_size, self.z_dim = batch_size, z_dim
        self.bce = nn.BCELoss()
        self.G_optimizer = torch.optim.Adam(G.parameters(), lr=2e-4)
        self.D_optimizer = torch.optim.Adam(D.parameters(), lr=2e-4)
        self.y_real_ = torch.ones(batch_size, 1)
        self.y_fake_ = torch.zeros(batch_size, 1)

    def train(self, epochs):
        for epoch in range(epochs):
            for x_, _ in self.loader:
                z_ = torch.rand((self.batch_size, self.z_dim))
                code = torch.from_numpy(np.random.uniform(-1, 1, size=(self.batch_size, 2))).type(torch.FloatTensor)

                self.D_optimizer.zero_grad()
                D_real, _ = self.D(x_)
                G_ = self.G(z_, code)
                D_fake, _ = self.D(G_)
                D_loss = self.bce(D_real, self.y_real_) + self.bce(D_fake, self.y_fake_)
                D_loss.backward(retain_graph=True)  # expect: TL005
                self.D_optimizer.step()

                self.G_optimizer.zero_grad()
                G_ = self.G(z_, code)
                D_fake, D_code = self.D(G_)
                G_loss = self.bce(D_fake, self.y_real_) + (D_code - code).pow(2).mean()
                G_loss.backward()
                self.G_optimizer.step()
