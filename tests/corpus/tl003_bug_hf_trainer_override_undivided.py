"""A `Trainer` subclass overriding `training_step` without dividing the loss: the override wins over the
Hugging Face one (which divides), so the accumulated update is N times too large."""
from transformers import Trainer


class ContrastiveTrainer(Trainer):
    def training_step(self, model, inputs):
        loss = model(**inputs).loss
        loss.backward()  # expect: TL003
        return loss.detach()

    def train(self, epochs=3):
        model = self.model
        loader = self.get_train_dataloader()
        for epoch in range(epochs):
            for step, inputs in enumerate(loader):
                self.training_step(model, inputs)
                if (step + 1) % self.args.gradient_accumulation_steps == 0:
                    self.optimizer.step()
                    model.zero_grad()
            self.optimizer.step()
            model.zero_grad()
