"""A trainer class divides by the Accelerator's own count, the very count `accelerator.backward` divides by."""
import torch
import torch.nn.functional as F
from accelerate import Accelerator


class DiffusionTrainer:
    def __init__(self, model, loader, config):
        self.accelerator = Accelerator(gradient_accumulation_steps=config.grad_accum,
                                       mixed_precision=config.precision)
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr)
        self.model, self.optimizer, self.loader = self.accelerator.prepare(model, self.optimizer, loader)

    def train_epoch(self, scheduler):
        for latents in self.loader:
            with self.accelerator.accumulate(self.model):
                noise = torch.randn_like(latents)
                t = torch.randint(0, scheduler.num_train_timesteps, (latents.shape[0],), device=latents.device)
                noisy = scheduler.add_noise(latents, noise, t)
                loss = F.mse_loss(self.model(noisy, t), noise)
                self.accelerator.backward(loss / self.accelerator.gradient_accumulation_steps)  # expect: TL013
                if self.accelerator.sync_gradients:
                    self.accelerator.clip_grad_norm_(self.model.parameters(), 1.0)
                self.optimizer.step()
                self.optimizer.zero_grad()
