"""Distributed token-count normalisation: the gradients are scaled by world_size / num_tokens (undoing FSDP's own
averaging), the count runs on across epochs and the reset before training sits outside the epochs' loop."""
import torch
import torch.distributed as dist
from torchtune import training


class LoRAFinetuneRecipeDistributed:
    def train(self):
        self._optimizer.zero_grad()
        running_loss = 0
        num_tokens = 0
        for curr_epoch in range(self.epochs_run, self.total_epochs):
            self._dataloader.sampler.set_epoch(curr_epoch)
            for idx, batch in enumerate(self._dataloader):
                current_num_tokens = (batch["labels"] != self._loss_fn.ignore_index).sum()
                num_tokens += current_num_tokens
                current_loss = self._loss_step(batch) * current_num_tokens
                running_loss += current_loss
                current_loss.backward()
                if (idx + 1) % self._gradient_accumulation_steps == 0:
                    dist.all_reduce(num_tokens)
                    dist.all_reduce(running_loss)
                    training.scale_grads(self._model, self.world_size / num_tokens)
                    self._optimizer.step()
                    self._optimizer.zero_grad(set_to_none=True)
                    self._lr_scheduler.step()
                    loss_to_log = running_loss.detach().item() / num_tokens
                    running_loss = 0
                    num_tokens = 0
