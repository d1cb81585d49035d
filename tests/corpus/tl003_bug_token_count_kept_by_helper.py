"""A trainer keeps its window's token count in an attribute that helper methods bump and reset, and divides the
window's gradients by it, but its mean loss is never multiplied by the micro-batch's own count."""
import torch
import torch.nn.functional as F


class Trainer:
    def count(self, labels):
        self.num_tokens += (labels != -100).sum()

    def reset_count(self):
        self.num_tokens = 0

    def train(self, loader, accum):
        self.reset_count()
        for step, (tokens, labels) in enumerate(loader):
            self.count(labels)
            logits = self.model(tokens)
            loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=-100)
            loss.backward()  # expect: TL003
            if (step + 1) % accum == 0 or step + 1 == len(loader):
                for p in self.model.parameters():
                    if p.grad is not None:
                        p.grad.div_(self.num_tokens)
                self.optimizer.step()
                self.optimizer.zero_grad()
                self.reset_count()
