"""A cap on the steps per epoch that only applies when set: without it, the last partial window is left."""
import torch


class DPORecipe:
    def train(self, dataloader, epochs):
        for epoch in range(epochs):
            for idx, batch in enumerate(dataloader):
                if self.max_steps_per_epoch is not None and idx // self.accum == self.max_steps_per_epoch:
                    break
                loss = self.loss_fn(self.model, batch).mean() / self.accum
                loss.backward()
                if (idx + 1) % self.accum == 0:  # expect: TL010
                    self.optimizer.step()
                    self.optimizer.zero_grad(set_to_none=True)
