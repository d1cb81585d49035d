"""Sequence classification: `outputs.loss` of a `...ForSequenceClassification` model is a mean over the
examples of the micro-batch, one label each, however the inputs are padded. With a fixed batch size every
micro-batch weighs the same, so dividing by the accumulation count gives the window's mean."""
import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, DataCollatorWithPadding


def main(args, dataset, tokenizer):
    model = AutoModelForSequenceClassification.from_pretrained(args.model_name, num_labels=2)
    loader = DataLoader(dataset, batch_size=args.batch_size, collate_fn=DataCollatorWithPadding(tokenizer),
                        drop_last=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        for step, batch in enumerate(loader):
            outputs = model(**batch)
            loss = outputs.loss / args.gradient_accumulation_steps
            loss.backward()
            if (step + 1) % args.gradient_accumulation_steps == 0 or step + 1 == len(loader):
                optimizer.step()
                optimizer.zero_grad()
