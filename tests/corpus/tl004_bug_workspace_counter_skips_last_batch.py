"""The step count is advanced after the step test on every batch but the epoch's last, whose advance comes
after the validation at the epoch's end: still 0 on the first micro-batch, so the first update uses one."""
import torch
import tqdm
from torch import nn


class DiffusionWorkspace:
    include_keys = ["global_step", "epoch"]

    def __init__(self, cfg, policy, dataloader):
        self.cfg = cfg
        self.model = policy
        self.train_dataloader = dataloader
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-4)
        self.global_step = 0
        self.epoch = 0

    def run(self):
        cfg = self.cfg
        train_dataloader = self.train_dataloader
        for local_epoch_idx in range(cfg.training.num_epochs):
            train_losses = list()
            with tqdm.tqdm(train_dataloader, desc=f"Training epoch {self.epoch}") as tepoch:
                for batch_idx, batch in enumerate(tepoch):
                    raw_loss = self.model.compute_loss(batch)
                    loss = raw_loss / cfg.training.gradient_accumulate_every
                    loss.backward()
                    if self.global_step % cfg.training.gradient_accumulate_every == 0:  # expect: TL004
                        self.optimizer.step()
                        self.optimizer.zero_grad()
                    train_losses.append(raw_loss.item())
                    is_last_batch = (batch_idx == (len(train_dataloader) - 1))
                    if not is_last_batch:
                        self.global_step += 1
            self.validate()
            self.global_step += 1
            self.epoch += 1

    @torch.no_grad()
    def validate(self):
        self.model.eval()
        self.model.train()
