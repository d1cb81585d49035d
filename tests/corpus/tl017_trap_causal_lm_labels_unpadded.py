"""A causal LM trained on fixed-length blocks of one token stream: the labels are the inputs themselves and
nothing in the file pads or masks them (no -100 written, no collator), so every micro-batch holds as many
tokens, and the loss divided by the accumulation count is the window's token mean. Reading -100 (a check),
naming it as a criterion's `ignore_index` or clamping logits to it writes no label."""
import torch
from torch.nn import CrossEntropyLoss
from transformers import GPT2LMHeadModel


def evaluate(model, loader):
    criterion = CrossEntropyLoss(ignore_index=-100)
    for input_ids in loader:
        assert (input_ids != -100).all()
        logits = model(input_ids)[0].clamp(-100, 100)
        print(criterion(logits[:, :-1].flatten(0, 1), input_ids[:, 1:].flatten()))


def train(args, loader):
    model = GPT2LMHeadModel.from_pretrained("gpt2")
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for step, input_ids in enumerate(loader):
        outputs = model(input_ids, labels=input_ids)
        loss = outputs[0] / args.gradient_accumulation_steps
        loss.backward()
        if (step + 1) % args.gradient_accumulation_steps == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
