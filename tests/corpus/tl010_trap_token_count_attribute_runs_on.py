"""A recipe whose window token count is an attribute that runs on from one call of `train_epoch` to the
next, like the gradients: the micro-batches left over at the end of an epoch join the next window, and the
division by the window's count weighs them right."""
import torch.nn.functional as F


class Recipe:
    def __init__(self, model, optimizer, accum=8):
        self.model = model
        self.optimizer = optimizer
        self.accum = accum
        self.window_tokens = 0

    def train_epoch(self, loader):
        for i, batch in enumerate(loader):
            n = batch["attention_mask"].sum()
            self.window_tokens += n
            logits = self.model(batch["input_ids"])
            loss = F.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten(), reduction="sum")
            loss.backward()
            if (i + 1) % self.accum == 0:
                for p in self.model.parameters():
                    p.grad /= self.window_tokens
                self.optimizer.step()
                self.optimizer.zero_grad()
                self.window_tokens = 0
