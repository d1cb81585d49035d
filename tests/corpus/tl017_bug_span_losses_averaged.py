"""Span NER: the model's `forward` scores the start and end of every active token (a plain
`CrossEntropyLoss()` over the rows the attention mask selects) and averages the two: each is a mean over the
micro-batch's own number of tokens, and so is `(start_loss + end_loss) / 2`. The loop passes the positions in
a dict and divides the loss by the accumulation count."""
import torch
import torch.nn as nn
from torch.nn import CrossEntropyLoss
from transformers import BertModel, BertPreTrainedModel


class BertSpanForNer(BertPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self.bert = BertModel(config)
        self.start_fc = nn.Linear(config.hidden_size, config.num_labels)
        self.end_fc = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, input_ids, attention_mask=None, start_positions=None, end_positions=None):
        sequence_output = self.bert(input_ids=input_ids, attention_mask=attention_mask)[0]
        start_logits = self.start_fc(sequence_output)
        end_logits = self.end_fc(sequence_output)
        outputs = (start_logits, end_logits)
        if start_positions is not None and end_positions is not None:
            loss_fct = CrossEntropyLoss()
            active_loss = attention_mask.view(-1) == 1
            active_start_logits = start_logits.view(-1, self.num_labels)[active_loss]
            active_end_logits = end_logits.view(-1, self.num_labels)[active_loss]
            start_loss = loss_fct(active_start_logits, start_positions.view(-1)[active_loss])
            end_loss = loss_fct(active_end_logits, end_positions.view(-1)[active_loss])
            total_loss = (start_loss + end_loss) / 2
            outputs = (total_loss,) + outputs
        return outputs


def train(args, model, train_dataloader, optimizer):
    for step, batch in enumerate(train_dataloader):
        batch = tuple(t.to(args.device) for t in batch)
        inputs = {"input_ids": batch[0], "attention_mask": batch[1],
                  "start_positions": batch[3], "end_positions": batch[4]}
        outputs = model(**inputs)
        loss = outputs[0]
        if args.gradient_accumulation_steps > 1:
            loss = loss / args.gradient_accumulation_steps  # expect: TL017
        loss.backward()
        if (step + 1) % args.gradient_accumulation_steps == 0 or step + 1 == len(train_dataloader):
            optimizer.step()
            model.zero_grad()


def main(args, train_dataloader):
    model = BertSpanForNer.from_pretrained(args.model_name_or_path)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    train(args, model, train_dataloader, optimizer)
