"""A library helper rescales the gradients by the window's token count; the loss is weighted by its own."""
from mylib import training


class Recipe:
    def train(self, dataloader, epochs):
        num_tokens = 0
        for epoch in range(epochs):
            for idx, batch in enumerate(dataloader):
                current_num_tokens = (batch["labels"] != self._loss_fn.ignore_index).sum()
                num_tokens += current_num_tokens
                factor = current_num_tokens if not self.optimizer_in_bwd else 1.0
                current_loss = self._loss_step(batch) * factor
                current_loss.backward()
                if (idx + 1) % self._gradient_accumulation_steps == 0:
                    if not self.optimizer_in_bwd:
                        training.scale_grads_(self._model.parameters(), 1.0 / num_tokens)
                    self._optimizer.step()
                    self._optimizer.zero_grad(set_to_none=True)
                    num_tokens = 0
