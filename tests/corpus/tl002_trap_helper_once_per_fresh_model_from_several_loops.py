"""Several test loops call a helper that builds an optimizer over the model it is handed, backpropagates
once and steps: each loop gives it a model built in that iteration (loaded, built by a method, or loaded
again before a second call), and calls it once per model (on one branch or the other), so every step starts from empty gradients."""
import torch
from transformers import AutoModelForCausalLM


class TestAdapters:
    def _create_model(self, model_path):
        self.model = AutoModelForCausalLM.from_pretrained(model_path)

    def _backprop(self, model):
        loss = model(self.inputs).logits[0, -1].sum()
        loss.backward()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        optimizer.step()
        return model

    def test_save_and_load(self):
        for model_path in ["gpt2", "opt-125m"]:
            self._create_model(model_path)
            self._backprop(self.model)
            self.model.save_pretrained(self.tmp_dir)

    def test_generate(self):
        for model_path in ["gpt2", "opt-125m"]:
            model = AutoModelForCausalLM.from_pretrained(model_path)
            self._backprop(model)
            model.generate(self.inputs)

    def test_reload_between(self):
        for model_path in ["gpt2", "opt-125m"]:
            model = AutoModelForCausalLM.from_pretrained(model_path)
            self._backprop(model)
            model = AutoModelForCausalLM.from_pretrained(model_path)
            self._backprop(model)

    def test_either_adapter(self, with_adapter):
        for model_path in ["gpt2", "opt-125m"]:
            model = AutoModelForCausalLM.from_pretrained(model_path)
            if with_adapter:
                model.add_adapter("lora")
                self._backprop(model)
            else:
                self._backprop(model)
