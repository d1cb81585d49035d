"""A causal LM built in `main`, wrapped in `DataParallel` and moved, then handed to `train` under the same name:
every binding of `model` is that language model, and the file pads its labels with -100, so the loss is a
mean over each micro-batch's real tokens, and dividing it by the accumulation count weighs short batches'
tokens more."""
import torch
from transformers import AutoModelForCausalLM


def collate(rows, pad_id):
    longest = max(len(row) for row in rows)
    input_ids = [row + [pad_id] * (longest - len(row)) for row in rows]
    labels = [row + [-100] * (longest - len(row)) for row in rows]
    return torch.tensor(input_ids), torch.tensor(labels)


def train(args, model, loader):
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for step, (input_ids, labels) in enumerate(loader):
        outputs = model(input_ids, labels=labels)
        loss = outputs[0]
        loss = loss / args.accum  # expect: TL017
        loss.backward()
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def main(args, loader):
    model = AutoModelForCausalLM.from_pretrained(args.name)
    model = torch.nn.DataParallel(model)
    model = model.to("cuda")
    train(args, model, loader)
