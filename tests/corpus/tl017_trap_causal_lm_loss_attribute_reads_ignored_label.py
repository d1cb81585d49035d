"""`outputs.loss` of a causal LM trained on fixed-length blocks: the file only reads -100 (a check that no
label is ignored) and never writes it into labels, and no collator pads them, so every micro-batch holds as
many tokens and dividing by the accumulation count gives the window's token mean. Nothing is reported."""
import torch
from transformers import AutoModelForCausalLM


def train(args, loader):
    model = AutoModelForCausalLM.from_pretrained(args.name)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for step, block in enumerate(loader):
        assert (block != -100).all()
        outputs = model(input_ids=block, labels=block)
        loss = outputs.loss / args.accum
        loss.backward()
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
