"""Four test loops share a helper that builds an optimizer over the model it is handed, backpropagates and
steps, with no reset. Each loop loads a new model in every iteration, so a single call starts from empty
gradients; but `test_backpropagation()` calls the helper twice on one model: the second step applies the
first call's gradients again, added to its own."""
import torch
from transformers import AutoModelForCausalLM


class TestAdapters:
    def _create_model(self, model_path):
        self.model = AutoModelForCausalLM.from_pretrained(model_path)

    def _backprop(self, model):
        loss = model(self.inputs).logits[0, -1].sum()
        loss.backward()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        optimizer.step()  # expect: TL002
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

    def test_backpropagation(self):
        for model_path in ["gpt2", "opt-125m"]:
            self._create_model(model_path)
            before = {name: p.clone() for name, p in self.model.named_parameters()}
            self._backprop(self.model)
            self._backprop(self.model)
            assert any(not torch.equal(before[name], p) for name, p in self.model.named_parameters())
