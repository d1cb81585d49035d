"""NER fine-tuning: the inputs go to the model as a dict (`model(**inputs)`) that holds the labels, so the
model's `forward` takes its labelled path and returns a cross-entropy over the active tokens (padding ignored
with `ignore_index=0`): a mean over each micro-batch's own number of tokens, divided by the accumulation
count."""
import torch
import torch.nn as nn
from torch.nn import CrossEntropyLoss
from transformers import BertModel, BertPreTrainedModel


class BertSoftmaxForNer(BertPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self.bert = BertModel(config)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, labels=None):
        outputs = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
        logits = self.classifier(outputs[0])
        outputs = (logits,) + outputs[2:]
        if labels is not None:
            loss_fct = CrossEntropyLoss(ignore_index=0)
            if attention_mask is not None:
                active_loss = attention_mask.view(-1) == 1
                active_logits = logits.view(-1, self.num_labels)[active_loss]
                active_labels = labels.view(-1)[active_loss]
                loss = loss_fct(active_logits, active_labels)
            else:
                loss = loss_fct(logits.view(-1, self.num_labels), labels.view(-1))
            outputs = (loss,) + outputs
        return outputs


def train(args, train_dataloader, model, optimizer):
    for step, batch in enumerate(train_dataloader):
        model.train()
        batch = tuple(t.to(args.device) for t in batch)
        inputs = {"input_ids": batch[0], "attention_mask": batch[1], "labels": batch[3]}
        if args.model_type != "distilbert":
            inputs["token_type_ids"] = batch[2] if args.model_type in ["bert", "xlnet"] else None
        outputs = model(**inputs)
        loss = outputs[0]
        if args.n_gpu > 1:
            loss = loss.mean()
        if args.gradient_accumulation_steps > 1:
            loss = loss / args.gradient_accumulation_steps  # expect: TL017
        loss.backward()
        if (step + 1) % args.gradient_accumulation_steps == 0 or step + 1 == len(train_dataloader):
            optimizer.step()
            model.zero_grad()


def main(args, train_dataloader):
    model = BertSoftmaxForNer.from_pretrained(args.model_name_or_path)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    train(args, train_dataloader, model, optimizer)
