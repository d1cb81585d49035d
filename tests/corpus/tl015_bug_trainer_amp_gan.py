"""A GAN trainer with mixed precision: the critic's scaled step lands between the two backwards."""
import torch
import torch.nn.functional as F


class GANTrainer:
    def __init__(self, gen, disc, lr=2e-4):
        self.gen = gen
        self.disc = disc
        self.opt_g = torch.optim.Adam(self.gen.parameters(), lr=lr, betas=(0.0, 0.99))
        self.opt_d = torch.optim.Adam(self.disc.parameters(), lr=lr, betas=(0.0, 0.99))
        self.scaler = torch.cuda.amp.GradScaler()

    def fit(self, loader, z_dim):
        for real in loader:
            z = torch.randn(real.size(0), z_dim, device=real.device)
            with torch.autocast("cuda"):
                fake = self.gen(z)
                logits_fake = self.disc(fake)
                logits_real = self.disc(real)
                d_loss = F.softplus(logits_fake).mean() + F.softplus(-logits_real).mean()
            self.opt_d.zero_grad(set_to_none=True)
            self.scaler.scale(d_loss).backward(retain_graph=True)
            self.scaler.step(self.opt_d)  # expect: TL015
            with torch.autocast("cuda"):
                g_loss = F.softplus(-logits_fake).mean()
            self.opt_g.zero_grad(set_to_none=True)
            self.scaler.scale(g_loss).backward()
            self.scaler.step(self.opt_g)
            self.scaler.update()
