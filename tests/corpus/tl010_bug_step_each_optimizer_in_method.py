"""A runner's epoch method (OpenPrompt's `BaseRunner.training_epoch`) steps each of its optimizers in a loop over
them under `(batch_idx + 1) % N == 0`; the reset at the start of the next epoch throws the last, partial window
away."""
import torch
from tqdm import tqdm


class Runner:
    def __init__(self, model, train_dataloader, config):
        self.model = model
        self.train_dataloader = train_dataloader
        self.config = config
        self.optimizers = [torch.optim.AdamW(model.parameters(), lr=config.lr)]
        self.schedulers = []
        self.global_step = 0

    def training_epoch(self, epoch):
        self.model.train()
        self.model.zero_grad()
        with tqdm(total=len(self.train_dataloader), desc=f"train epoch: {epoch}") as pbar:
            for batch_idx, batch in enumerate(self.train_dataloader):
                loss = self.model(**batch).loss
                if self.config.gradient_accumulation_steps > 1:
                    loss = loss / self.config.gradient_accumulation_steps
                loss.backward()
                if (batch_idx + 1) % self.config.gradient_accumulation_steps == 0:  # expect: TL010
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                    for optimizer in self.optimizers:
                        optimizer.step()
                    for scheduler in self.schedulers:
                        scheduler.step()
                    for optimizer in self.optimizers:
                        optimizer.zero_grad()
                    self.global_step += 1
                    pbar.update(1)

    def fit(self, num_epochs):
        for epoch in range(num_epochs):
            self.training_epoch(epoch)
