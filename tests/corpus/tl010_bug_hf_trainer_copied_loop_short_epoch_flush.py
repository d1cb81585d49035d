"""The Hugging Face loop copied into a `Trainer` subclass (SimCSE's shape): `training_step` inherited, called under
`model.no_sync()` on the micro-batches that do not step and plainly on the others, and the step condition written
over several lines with a comment. Its second clause flushes only epochs no longer than one window."""
from transformers import Trainer


class CLTrainer(Trainer):
    def train(self, epochs=3):
        model = self.model
        loader = self.get_train_dataloader()
        steps_in_epoch = len(loader)
        for epoch in range(epochs):
            for step, inputs in enumerate(loader):
                if (step + 1) % self.args.gradient_accumulation_steps != 0 and self.args.local_rank != -1:
                    with model.no_sync():
                        self.training_step(model, inputs)
                else:
                    self.training_step(model, inputs)
                if (step + 1) % self.args.gradient_accumulation_steps == 0 or (  # expect: TL010
                    # last step in epoch but step is always smaller than gradient_accumulation_steps
                    steps_in_epoch <= self.args.gradient_accumulation_steps
                    and (step + 1) == steps_in_epoch
                ):
                    self.optimizer.step()
                    self.lr_scheduler.step()
                    model.zero_grad()
