"""The helper builds a new optimizer on every call, but over the parameters of a model built once before
the loop: their `.grad` persists across calls, so each step applies the sum of every call's gradients."""
import torch
from transformers import AutoModelForCausalLM


class Finetune:
    def _backprop(self, model, batch):
        loss = model(batch).logits[0, -1].sum()
        loss.backward()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        optimizer.step()  # expect: TL002

    def run(self, batches):
        self.model = AutoModelForCausalLM.from_pretrained("gpt2")
        for batch in batches:
            self._backprop(self.model, batch)
