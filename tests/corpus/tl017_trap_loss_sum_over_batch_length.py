"""A summed loss divided by the length of the batch or of something not selected by a mask: `len(batch)`,
`tokens.size(0)` (the number of sequences, fixed by the loader), `targets.numel()` of the whole padded
tensor. Those are per-sample or per-element means over a fixed shape, not a mean over a varying number of
tokens, so nothing is reported."""
import torch.nn as nn


def train(args, model, loader, optimizer):
    for step, (tokens, targets) in enumerate(loader):
        logits = model(tokens)
        losses = nn.functional.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
        per_sequence = losses.sum() / len(tokens)
        per_row = losses.sum() / tokens.size(0)
        per_element = losses.sum() / targets.numel()
        loss = (per_sequence + per_row + per_element) / args.accum
        loss.backward()
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
