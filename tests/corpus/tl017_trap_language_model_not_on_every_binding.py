"""The loss of a Hugging Face language model is a token mean only if the model is one on every path: here
one binding of the name builds something else, so what the loss averages is not shown, and nothing is
reported. A RAG model whose loss with `reduce_loss=True` is a sum over the batch, a checkpoint loaded
whole by `torch.load` (any class), and a `train(model, ...)` whose callers pass some other object than the
file's own language model."""
import torch
from transformers import (
    AutoModelForCausalLM, BartForConditionalGeneration, DataCollatorForSeq2Seq, RagTokenForGeneration,
)


def train_rag_or_bart(args, loader, optimizer):
    if args.rag:
        model = RagTokenForGeneration.from_pretrained(args.name)
    else:
        model = BartForConditionalGeneration.from_pretrained(args.name)
    for step, batch in enumerate(loader):
        labels = batch["labels"]
        labels[labels == 1] = -100
        outputs = model(batch["input_ids"], labels=labels, reduce_loss=True)
        loss = outputs[0]
        loss = loss / args.gradient_accumulation_steps
        loss.backward()
        if (step + 1) % args.gradient_accumulation_steps == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def train_resumed(args, loader, tokenizer):
    collator = DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=-100)
    if args.resume:
        net = torch.load(args.resume)
    else:
        net = AutoModelForCausalLM.from_pretrained(args.name)
    optimizer = torch.optim.AdamW(net.parameters(), lr=args.lr)
    for step, batch in enumerate(loader):
        batch = collator(batch)
        loss = net(**batch).loss
        loss = loss / args.accum
        loss.backward()
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def fit(lm, loader, args):
    optimizer = torch.optim.AdamW(lm.parameters(), lr=args.lr)
    for step, batch in enumerate(loader):
        loss = lm(**batch).loss / args.accum
        loss.backward()
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def main(args, loader, build_student):
    lm = AutoModelForCausalLM.from_pretrained(args.name)
    lm.save_pretrained(args.out)
    fit(build_student(args), loader, args)
