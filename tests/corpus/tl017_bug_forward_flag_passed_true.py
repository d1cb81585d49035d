"""The model's `forward` computes its token-mean loss only when its `train` flag is set, and returns the
predictions otherwise; the loop passes `True` (by position, and by keyword), so only the training branch
runs, and its loss, a mean over the non-pad tokens of the micro-batch, is divided by the accumulation count."""
import torch
import torch.nn as nn


class Completer(nn.Module):
    def __init__(self, decoder, hidden, vocab):
        super().__init__()
        self.decoder = decoder
        self.lm_head = nn.Linear(hidden, vocab)

    def forward(self, source_ids, train=False):
        logits = self.lm_head(self.decoder(source_ids))
        if train:
            active = source_ids[..., 1:].ne(1).view(-1)
            shift_logits = logits[..., :-1, :].contiguous().view(-1, logits.size(-1))
            loss = nn.CrossEntropyLoss()(shift_logits[active], source_ids[..., 1:].contiguous().view(-1)[active])
            return loss, active.sum()
        return logits.argmax(-1)


def train(args, decoder, loader):
    model = Completer(decoder, args.hidden, args.vocab)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for step, source_ids in enumerate(loader):
        loss, _ = model(source_ids, True)
        loss = loss / args.accum  # expect: TL017
        loss.backward()
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def train_keyword(args, decoder, loader):
    net = Completer(decoder, args.hidden, args.vocab)
    optimizer = torch.optim.AdamW(net.parameters(), lr=args.lr)
    for step, source_ids in enumerate(loader):
        outputs = net(source_ids, train=True)
        (outputs[0] / args.accum).backward()  # expect: TL017
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
