"""The `forward` returns a token mean only under `if not plain:`; the loops pass `plain=True` (the branch that
returns a per-sequence mean) or a flag only the run knows (`args.plain`). Neither call is shown to return the
token mean, so nothing is reported."""
import torch
import torch.nn as nn


class Completer(nn.Module):
    def __init__(self, decoder, hidden, vocab):
        super().__init__()
        self.decoder = decoder
        self.lm_head = nn.Linear(hidden, vocab)

    def forward(self, source_ids, plain=False):
        logits = self.lm_head(self.decoder(source_ids))
        losses = nn.functional.cross_entropy(logits.transpose(1, 2), source_ids, reduction="none")
        if not plain:
            active = source_ids.ne(1)
            return (losses * active).sum() / active.sum()
        return losses.mean(1).mean()


def train(args, decoder, loader):
    model = Completer(decoder, args.hidden, args.vocab)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for step, source_ids in enumerate(loader):
        loss = model(source_ids, plain=True) / args.accum
        loss.backward()
        other = model(source_ids, args.plain) / args.accum
        other.backward()
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
