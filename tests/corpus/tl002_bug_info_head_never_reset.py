"""The information optimizer also holds the Q head's parameters, which no reset in the loop reaches
(the GAN optimizers clear G's and D's only): Q's gradients are the running sum of every batch."""
import torch
import torch.nn as nn
import torch.optim as optim


class Trainer:
    def __init__(self, G, D, Q, lr):
        self.G, self.D, self.Q = G, D, Q
        self.opt_g = optim.Adam(self.G.parameters(), lr=lr)
        self.opt_d = optim.Adam(self.D.parameters(), lr=lr)
        self.opt_info = optim.Adam(
            [{"params": self.G.parameters()}, {"params": self.D.parameters()}, {"params": self.Q.parameters(), "lr": lr * 10}]
        )
        self.bce = nn.BCEWithLogitsLoss()
        self.ce = nn.CrossEntropyLoss()

    def fit(self, loader, z_dim, n_codes):
        for x, _ in loader:
            z = torch.randn(x.size(0), z_dim)
            c = torch.randint(0, n_codes, (x.size(0),))
            self.opt_d.zero_grad()
            fake = self.G(z, c)
            real_logit, _ = self.D(x)
            fake_logit, _ = self.D(fake.detach())
            loss_d = self.bce(real_logit, torch.ones_like(real_logit)) + self.bce(fake_logit, torch.zeros_like(fake_logit))
            loss_d.backward()
            self.opt_d.step()

            self.opt_g.zero_grad()
            fake_logit, features = self.D(fake)
            loss_g = self.bce(fake_logit, torch.ones_like(fake_logit))
            loss_info = self.ce(self.Q(features), c)
            (loss_g + loss_info).backward()
            self.opt_g.step()
            self.opt_info.step()  # expect: TL002
