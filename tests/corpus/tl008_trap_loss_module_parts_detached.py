"""A loss module of this file returns the total and its parts, the parts already detached for the report:
adding them up keeps no graph."""
import torch.nn as nn
import torch.nn.functional as F


class VAELoss(nn.Module):
    def __init__(self, beta=1.0):
        super().__init__()
        self.beta = beta

    def forward(self, recon, x, mu, logvar):
        rec = F.mse_loss(recon, x, reduction="sum") / x.size(0)
        kld = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum() / x.size(0)
        return rec + self.beta * kld, rec.detach(), kld.detach()


def train(vae, loader, optimizer, epochs):
    criterion = VAELoss(beta=4.0)
    for epoch in range(epochs):
        rec_total, kld_total = 0.0, 0.0
        for x, _ in loader:
            recon, mu, logvar = vae(x)
            loss, rec, kld = criterion(recon, x, mu, logvar)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            rec_total += rec
            kld_total += kld
        print(epoch, rec_total / len(loader), kld_total / len(loader))
