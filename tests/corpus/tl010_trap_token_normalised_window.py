"""Token-count normalisation with a count that runs on across epochs: the micro-batches left over at the end of
an epoch join the next window, and the division by the window's token count weighs them right."""
import torch


def scale_grads(model, factor):
    for p in model.parameters():
        if p.grad is not None:
            p.grad.mul_(factor)


class Recipe:
    def train(self, dataloader, epochs):
        num_tokens = 0
        for epoch in range(epochs):
            for idx, batch in enumerate(dataloader):
                tokens = (batch["labels"] != -100).sum()
                num_tokens += tokens
                loss = self.loss_fn(self.model(batch["input_ids"]), batch["labels"]) * tokens
                loss.backward()
                if (idx + 1) % self.accum == 0:
                    scale_grads(self.model, 1 / num_tokens)
                    self.optimizer.step()
                    self.optimizer.zero_grad(set_to_none=True)
                    num_tokens = 0
