"""`outputs.loss` of a causal LM whose labels the file pads with -100 itself (no collator): a mean over each
micro-batch's real tokens, so dividing it by the accumulation count weighs short batches' tokens more. The
same reading as for `outputs[0]` given labels."""
import torch
from transformers import AutoModelForCausalLM


def collate(rows, pad_id):
    longest = max(len(row) for row in rows)
    input_ids = torch.tensor([row + [pad_id] * (longest - len(row)) for row in rows])
    labels = torch.tensor([row + [-100] * (longest - len(row)) for row in rows])
    return {"input_ids": input_ids, "labels": labels}


def train(args, loader):
    model = AutoModelForCausalLM.from_pretrained(args.name)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for step, batch in enumerate(loader):
        outputs = model(**batch)
        loss = outputs.loss / args.accum  # expect: TL017
        loss.backward()
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
