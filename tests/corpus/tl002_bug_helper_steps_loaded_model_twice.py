"""A new model per iteration, but the helper that builds an optimizer and steps runs twice on it: the
second step applies the first call's gradients again, added to its own."""
import torch
from transformers import AutoModelForCausalLM


class Probe:
    def _backprop(self, model, batch):
        loss = model(batch).logits[0, -1].sum()
        loss.backward()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        optimizer.step()  # expect: TL002

    def run(self, paths, batch):
        for path in paths:
            model = AutoModelForCausalLM.from_pretrained(path)
            self._backprop(model, batch)
            self._backprop(model, batch)
