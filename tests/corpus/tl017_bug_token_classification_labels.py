"""Token classification (type prediction, NER) with a Hugging Face model: `outputs.loss` of a
`...ForTokenClassification` model is a cross-entropy mean over the labels that are not -100, and the file
writes -100 for the sub-word and padding positions itself (and pads with the token-classification
collator). The count of labelled tokens varies with each micro-batch, so dividing by the accumulation
count over-weights micro-batches with few of them."""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import AutoModelForTokenClassification, DataCollatorForTokenClassification


def tokenize_and_align_labels(examples, tokenizer):
    tokenized = tokenizer(examples["tokens"], truncation=True, is_split_into_words=True)
    labels = []
    for i, label in enumerate(examples["tags"]):
        previous, ids = None, []
        for word in tokenized.word_ids(batch_index=i):
            ids.append(-100 if word is None or word == previous else label[word])
            previous = word
        labels.append(ids)
    tokenized["labels"] = labels
    return tokenized


def main(args, dataset, tokenizer):
    accelerator = Accelerator()
    model = AutoModelForTokenClassification.from_pretrained(args.model_name, num_labels=args.num_labels)
    collator = DataCollatorForTokenClassification(tokenizer)
    loader = DataLoader(dataset.map(lambda e: tokenize_and_align_labels(e, tokenizer), batched=True),
                        batch_size=args.batch_size, collate_fn=collator, shuffle=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(args.epochs):
        model.train()
        for step, batch in enumerate(loader):
            outputs = model(**batch)
            loss = outputs.loss
            loss = loss / args.gradient_accumulation_steps  # expect: TL017
            accelerator.backward(loss)
            if (step + 1) % args.gradient_accumulation_steps == 0 or step == len(loader) - 1:
                optimizer.step()
                optimizer.zero_grad()
