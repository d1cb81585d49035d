"""The batch's inputs come from a method of the trainer that builds them on every branch with `labels` masked to
-100 where the target is padding: the seq2seq model's first output is a mean over each micro-batch's real target
tokens, divided by the accumulation count."""
import torch
from transformers import BartForConditionalGeneration, MBartForConditionalGeneration


class Seq2SeqModel:
    def __init__(self, args, model_name):
        self.args = args
        if args.model_type == "mbart":
            self.model = MBartForConditionalGeneration.from_pretrained(model_name)
        else:
            self.model = BartForConditionalGeneration.from_pretrained(model_name)

    def train(self, train_dataloader, optimizer, scheduler):
        model = self.model
        args = self.args
        for epoch in range(args.num_train_epochs):
            for step, batch in enumerate(train_dataloader):
                inputs = self._get_inputs_dict(batch)
                outputs = model(**inputs)
                loss = outputs[0]
                if args.gradient_accumulation_steps > 1:
                    loss = loss / args.gradient_accumulation_steps  # expect: TL017
                loss.backward()
                if (step + 1) % args.gradient_accumulation_steps == 0 or step + 1 == len(train_dataloader):
                    torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                    optimizer.step()
                    scheduler.step()
                    model.zero_grad()

    def _get_inputs_dict(self, batch):
        if self.args.model_type == "mbart":
            inputs = {
                "input_ids": batch["input_ids"],
                "attention_mask": batch["attention_mask"],
                "labels": batch["labels"],
            }
        else:
            labels = batch["target_ids"].clone()
            labels[labels == self.args.pad_token_id] = -100
            inputs = {"input_ids": batch["source_ids"], "attention_mask": batch["source_mask"], "labels": labels}
        return inputs
