"""A `Trainer` subclass that also inherits from a class of another package, which may define its own
`training_step`: what the loop's call runs is unknown, quiet."""
from transformers import Trainer

from mylib.mixins import ContrastiveMixin


class ContrastiveTrainer(ContrastiveMixin, Trainer):
    def train(self, epochs=3):
        model = self.model
        loader = self.get_train_dataloader()
        for epoch in range(epochs):
            for step, inputs in enumerate(loader):
                self.training_step(model, inputs)
                if (step + 1) % self.args.gradient_accumulation_steps == 0:
                    self.optimizer.step()
                    model.zero_grad()
