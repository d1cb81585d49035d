"""A test that loads a new model in each iteration (a method sets `self.model`) and has a helper build an
optimizer over the model it is handed, backpropagate once and step: every step starts from empty gradients."""
import torch
from transformers import AutoModelForCausalLM


class TestAdapters:
    def _create_model(self, model_path, adapter_config):
        self.model = AutoModelForCausalLM.from_pretrained(model_path)
        if adapter_config is not None:
            self.model = add_adapter(self.model, adapter_config)

    def _backprop(self, model):
        loss = model(self.inputs).logits[0, -1].sum()
        loss.backward()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        optimizer.step()
        return model

    def test_save_and_load(self):
        for model_path in ["gpt2", "opt-125m"]:
            self._create_model(model_path, {"r": 8, "alpha": 32})
            self._backprop(self.model)
            self.model.save_pretrained(self.tmp_dir)

    def test_local_model(self):
        for model_path in ["gpt2", "opt-125m"]:
            model = AutoModelForCausalLM.from_pretrained(model_path, adapter={"r": 8})
            self._backprop(model)
