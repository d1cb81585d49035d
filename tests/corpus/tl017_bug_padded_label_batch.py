"""Instruction tuning: inputs and labels come from a collator that pads the labels with -100; both are cut along
the last axis, but the labels are a stream of their own, so the number of real targets varies per micro-batch."""
import torch
import torch.nn.functional as F


def train(model, optimizer, loader, accum, block):
    for step, batch in enumerate(loader):
        input_ids = batch["input_ids"][:, 0:block]
        labels = batch["labels"][:, 1 : block + 1]
        logits = model(input_ids)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.reshape(-1), ignore_index=-100)
        (loss / accum).backward()  # expect: TL017
        if (step + 1) % accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
