"""Summed token losses, the gradients divided by the window's token count before the step (in a helper and inline)."""
import torch.nn.functional as F


def normalise(model, count):
    for p in model.parameters():
        if p.grad is not None:
            p.grad /= count


def train(model, loader, optimizer, accum):
    seen = 0
    for i, (tokens, labels) in enumerate(loader):
        mask = labels != -100
        seen += mask.sum()
        loss = F.cross_entropy(model(tokens)[mask], labels[mask]) * mask.sum()
        loss.backward()
        if (i + 1) % accum == 0 or (i + 1) == len(loader):
            normalise(model, seen)
            optimizer.step()
            optimizer.zero_grad()
            seen = 0


def train_inline(model, loader, optimizer, accum):
    tokens_in_window = 0
    for i, batch in enumerate(loader):
        n = batch["attention_mask"].sum()
        tokens_in_window += n
        (model(**batch).loss * n).backward()
        if (i + 1) % accum == 0 or (i + 1) == len(loader):
            for p in model.parameters():
                p.grad.div_(tokens_in_window)
            optimizer.step()
            optimizer.zero_grad()
            tokens_in_window = 0
