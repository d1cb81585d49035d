"""The generator handed in returns a token mean, but `train` may replace it with a model whose loss is a sum
(`--distill`), and `fit` is also called with a model the file does not build: on some path the loss is not a
token mean, so nothing is reported."""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, hidden, vocab):
        super().__init__()
        self.lm_head = nn.Linear(hidden, vocab)

    def forward(self, hidden, target_ids, target_mask):
        logits = self.lm_head(hidden)
        active = target_mask.view(-1) != 0
        return nn.functional.cross_entropy(logits.view(-1, logits.size(-1))[active], target_ids.view(-1)[active])


class SummingGenerator(Generator):
    def forward(self, hidden, target_ids, target_mask):
        logits = self.lm_head(hidden)
        return nn.functional.cross_entropy(logits.transpose(1, 2), target_ids, reduction="sum")


def train(args, model, loader):
    if args.distill:
        model = SummingGenerator(args.hidden, args.vocab)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for step, (hidden, target_ids, target_mask) in enumerate(loader):
        loss = model(hidden, target_ids, target_mask) / args.accum
        loss.backward()
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def fit(args, model, loader):
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for step, (hidden, target_ids, target_mask) in enumerate(loader):
        loss = model(hidden, target_ids, target_mask) / args.accum
        loss.backward()
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def main(args, loader, restored):
    model = Generator(args.hidden, args.vocab)
    train(args, model, loader)
    fit(args, model, loader)
    fit(args, restored, loader)
