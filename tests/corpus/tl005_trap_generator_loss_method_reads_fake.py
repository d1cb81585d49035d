"""The generator's loss comes from a method that reads `self.fake`, the discriminator's input set in the loop:
the later backward goes through the generator output's graph again."""
import torch
import torch.nn as nn


class GANTrainer:
    def __init__(self, G, D, loader, z_dim=64):
        self.G, self.D, self.loader, self.z_dim = G, D, loader, z_dim
        self.bce = nn.BCEWithLogitsLoss()
        self.opt_G = torch.optim.Adam(G.parameters(), lr=2e-4)
        self.opt_D = torch.optim.Adam(D.parameters(), lr=2e-4)

    def generator_loss(self):
        logits = self.D(self.fake)
        return self.bce(logits, torch.ones_like(logits))

    def train(self):
        for real in self.loader:
            z = torch.randn(real.size(0), self.z_dim)
            self.fake = self.G(z)
            real_logits = self.D(real)
            fake_logits = self.D(self.fake)
            d_loss = self.bce(real_logits, torch.ones_like(real_logits)) \
                + self.bce(fake_logits, torch.zeros_like(fake_logits))
            self.opt_D.zero_grad()
            d_loss.backward(retain_graph=True)
            self.opt_D.step()
            g_loss = self.generator_loss()
            self.opt_G.zero_grad()
            g_loss.backward()
            self.opt_G.step()
