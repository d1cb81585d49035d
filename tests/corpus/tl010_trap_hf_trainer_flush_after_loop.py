"""A `transformers.Trainer` subclass calling the inherited `training_step`, stepping on the epoch's last
micro-batch too: nothing is left behind."""
from transformers import Trainer


class ContrastiveTrainer(Trainer):
    def train(self, epochs=3):
        model = self.model
        loader = self.get_train_dataloader()
        for epoch in range(epochs):
            for step, inputs in enumerate(loader):
                self.training_step(model, inputs)
                if (step + 1) % self.args.gradient_accumulation_steps == 0 or step + 1 == len(loader):
                    self.optimizer.step()
                    model.zero_grad()
