"""Additions whose first value is not a token mean: a per-example loss with a token mean added at zero weight
(no gradient from it), and a sum that starts from 0 and adds a token mean per chunk of the batch (what the
sum averages over the inner loop is not one micro-batch's token mean as the rule reads it). Nothing is
reported."""
import torch.nn.functional as F


def train_zero_weight(args, model, loader, optimizer):
    for step, (tokens, targets) in enumerate(loader):
        logits, aux = model(tokens)
        loss = aux.mean()
        loss += F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-100) * 0
        (loss / args.accum).backward()
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def train_chunks(args, model, loader, optimizer):
    for step, (tokens, targets) in enumerate(loader):
        loss = 0
        for chunk, chunk_targets in zip(tokens.chunk(2), targets.chunk(2)):
            logits, _ = model(chunk)
            loss += F.cross_entropy(logits.flatten(0, 1), chunk_targets.flatten(), ignore_index=-100)
        (loss / args.accum).backward()
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
