"""A Hugging Face `Trainer` subclass overrides `training_step`: the Trainer's own loop steps, and whether (and by
what) the loss must be divided depends on the installed version and on `num_items_in_batch`: not judged."""
from transformers import Trainer


class MyTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        model.train()
        loss = self.compute_loss(model, inputs, num_items_in_batch=num_items_in_batch)
        self.accelerator.backward(loss)
        return loss.detach()


class PlainTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        model.train()
        loss = self.compute_loss(model, inputs)
        loss.backward()
        return loss.detach()
