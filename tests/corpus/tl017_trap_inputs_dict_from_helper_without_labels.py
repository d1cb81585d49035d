"""The helper's dicts do not all hold `labels` (one branch spreads the batch as it comes, another drops the
key): the model is not surely given labels, so its first output may be the logits. Nothing is flagged."""
import torch
from transformers import T5ForConditionalGeneration


class T5Model:
    def __init__(self, args, model_name):
        self.args = args
        self.model = T5ForConditionalGeneration.from_pretrained(model_name)

    def train(self, train_dataloader, optimizer):
        model = self.model
        args = self.args
        for step, batch in enumerate(train_dataloader):
            inputs = self._get_inputs_dict(batch)
            loss = model(**inputs)[0]
            loss = loss / args.gradient_accumulation_steps
            loss.backward()
            if (step + 1) % args.gradient_accumulation_steps == 0 or step + 1 == len(train_dataloader):
                optimizer.step()
                model.zero_grad()

    def _get_inputs_dict(self, batch):
        if self.args.use_hf_datasets:
            return {key: value.to(self.args.device) for key, value in batch.items()}
        labels = batch[2]
        labels[labels == self.args.pad_token_id] = -100
        inputs = {"input_ids": batch[0], "attention_mask": batch[1], "labels": labels}
        if self.args.unsupervised:
            del inputs["labels"]
        return inputs
