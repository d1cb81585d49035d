"""The model's `forward` sums the cross-entropy of the active tokens (`reduction="sum"`): no mean over a
micro-batch's tokens for the division by the accumulation count to misweigh (the loss scale grows with
the token count, which is a choice of its own, not this rule's bug)."""
import torch
import torch.nn as nn
from transformers import BertForTokenClassification


class Tagger(BertForTokenClassification):
    def forward(self, input_ids, attention_mask=None, labels=None):
        hidden = self.bert(input_ids, attention_mask=attention_mask)[0]
        logits = self.classifier(hidden)
        if labels is not None:
            loss_fct = nn.CrossEntropyLoss(ignore_index=0, reduction="sum")
            return loss_fct(logits.view(-1, self.num_labels), labels.view(-1))
        return logits


def main(args, loader):
    model = Tagger.from_pretrained(args.bert_model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for step, (input_ids, mask, label_ids) in enumerate(loader):
        loss = model(input_ids, mask, label_ids)
        loss = loss / args.gradient_accumulation_steps
        loss.backward()
        if (step + 1) % args.gradient_accumulation_steps == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
