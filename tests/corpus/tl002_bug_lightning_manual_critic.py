"""WGAN in Lightning with manual optimisation: several critic updates per generator update."""
import lightning as L
import torch


class WGAN(L.LightningModule):
    def __init__(self, generator, critic, latent_dim=128, n_critic=5):
        super().__init__()
        self.save_hyperparameters(ignore=["generator", "critic"])
        self.generator = generator
        self.critic = critic
        self.automatic_optimization = False

    def training_step(self, batch, batch_idx):
        opt_g, opt_d = self.optimizers()
        real, _ = batch
        for _ in range(self.hparams.n_critic):
            z = torch.randn(real.size(0), self.hparams.latent_dim, device=self.device)
            fake = self.generator(z).detach()
            d_loss = self.critic(fake).mean() - self.critic(real).mean()
            self.manual_backward(d_loss)
            opt_d.step()  # expect: TL002
            for p in self.critic.parameters():
                p.data.clamp_(-0.01, 0.01)
        z = torch.randn(real.size(0), self.hparams.latent_dim, device=self.device)
        g_loss = -self.critic(self.generator(z)).mean()
        opt_g.zero_grad()
        self.manual_backward(g_loss)
        opt_g.step()
        self.log_dict({"d_loss": d_loss, "g_loss": g_loss})

    def configure_optimizers(self):
        opt_g = torch.optim.RMSprop(self.generator.parameters(), lr=5e-5)
        opt_d = torch.optim.RMSprop(self.critic.parameters(), lr=5e-5)
        return opt_g, opt_d
