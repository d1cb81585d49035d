"""Each optimizer is stepped in a loop over them at every window's end, and once more after the epoch's loop for
the last, partial window."""
import torch


class Runner:
    def __init__(self, model, train_dataloader, accum):
        self.model = model
        self.train_dataloader = train_dataloader
        self.accum = accum
        self.optimizers = [torch.optim.AdamW(model.parameters(), lr=1e-4)]

    def training_epoch(self):
        self.model.train()
        for batch_idx, batch in enumerate(self.train_dataloader):
            loss = self.model(**batch).loss / self.accum
            loss.backward()
            if (batch_idx + 1) % self.accum == 0:
                for optimizer in self.optimizers:
                    optimizer.step()
                    optimizer.zero_grad()
        if len(self.train_dataloader) % self.accum != 0:
            for optimizer in self.optimizers:
                optimizer.step()
                optimizer.zero_grad()

    def fit(self, num_epochs):
        for epoch in range(num_epochs):
            self.training_epoch()
