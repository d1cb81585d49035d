"""A `transformers.Trainer` subclass with its own copy of the epoch loop: the backward runs in
`self.training_step(model, inputs)`, which the class inherits from the Hugging Face `Trainer` (it divides the
loss by `gradient_accumulation_steps` and backpropagates); the step waits for `(step + 1) % N == 0` and nothing
steps after the loop: the last partial window of each epoch leaks into the next."""
from transformers import Trainer


class ContrastiveTrainer(Trainer):
    def train(self, epochs=3):
        model = self.model
        loader = self.get_train_dataloader()
        for epoch in range(epochs):
            for step, inputs in enumerate(loader):
                self.training_step(model, inputs)
                if (step + 1) % self.args.gradient_accumulation_steps == 0:  # expect: TL010
                    self.optimizer.step()
                    self.lr_scheduler.step()
                    model.zero_grad()
