"""Distributed token-count normalisation whose count starts again every epoch while the gradients left over from the
last window are carried into the next epoch's first update."""
import torch
import torch.distributed as dist
from torchtune import training


class Recipe:
    def train(self):
        self._optimizer.zero_grad()
        for curr_epoch in range(self.total_epochs):
            num_tokens = 0
            for idx, batch in enumerate(self._dataloader):
                current_num_tokens = (batch["labels"] != -100).sum()
                num_tokens += current_num_tokens
                current_loss = self._loss_step(batch) * current_num_tokens
                current_loss.backward()
                if (idx + 1) % self._gradient_accumulation_steps == 0:  # expect: TL010
                    dist.all_reduce(num_tokens)
                    training.scale_grads(self._model, self.world_size / num_tokens)
                    self._optimizer.step()
                    self._optimizer.zero_grad(set_to_none=True)
                    num_tokens = 0
