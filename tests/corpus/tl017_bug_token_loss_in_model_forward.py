"""Token classification: the model's own `forward` returns a cross-entropy over the active tokens of the
batch (padding ignored with `ignore_index=0`), only when it is given labels. The loop passes them, so the
loss it divides by the accumulation count is a mean over each micro-batch's own number of tokens."""
import torch
import torch.nn as nn
from transformers import BertForTokenClassification


class Tagger(BertForTokenClassification):
    def forward(self, input_ids, attention_mask=None, labels=None, label_mask=None):
        hidden = self.bert(input_ids, attention_mask=attention_mask)[0]
        logits = self.classifier(self.dropout(hidden))
        if labels is not None:
            loss_fct = nn.CrossEntropyLoss(ignore_index=0)
            if label_mask is not None:
                active = label_mask.view(-1) == 1
                loss = loss_fct(logits.view(-1, self.num_labels)[active], labels.view(-1)[active])
            else:
                loss = loss_fct(logits.view(-1, self.num_labels), labels.view(-1))
            return loss
        return logits


def main(args, loader):
    model = Tagger.from_pretrained(args.bert_model, num_labels=args.num_labels)
    if args.n_gpu > 1:
        model = torch.nn.DataParallel(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    model.train()
    for step, batch in enumerate(loader):
        input_ids, mask, label_ids, label_mask = (t.cuda() for t in batch)
        loss = model(input_ids, mask, label_ids, label_mask)
        if args.n_gpu > 1:
            loss = loss.mean()
        if args.gradient_accumulation_steps > 1:
            loss = loss / args.gradient_accumulation_steps  # expect: TL017
        loss.backward()
        if (step + 1) % args.gradient_accumulation_steps == 0 or step + 1 == len(loader):
            optimizer.step()
            model.zero_grad()
