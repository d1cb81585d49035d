"""A token loss summed over the elements a mask of the micro-batch selects and divided by how many there are,
spelled as the length or size of the selection (`len(lm_labels)`, `.numel()`, `.size(0)`, `.shape[0]`): a
mean over the micro-batch's own target tokens, so dividing it by the accumulation count weighs the tokens of
short micro-batches more."""
import torch
import torch.nn as nn
from torch.nn import CrossEntropyLoss


class Generator(nn.Module):
    def __init__(self, encoder, hidden, vocab):
        super().__init__()
        self.encoder = encoder
        self.lm_head = nn.Linear(hidden, vocab)

    def forward(self, source_ids, type_ids):
        hidden = self.encoder(source_ids)[:, :-1]
        labels_mask = type_ids.eq(2)[:, 1:]
        hidden = hidden.reshape(-1, hidden.size(-1))[labels_mask.reshape(-1)]
        lm_labels = source_ids[:, 1:].reshape(-1)[labels_mask.reshape(-1)]
        lm_loss = CrossEntropyLoss(reduction="none")(self.lm_head(hidden), lm_labels)
        return lm_loss.sum() / len(lm_labels)


def train(args, encoder, loader):
    model = Generator(encoder, args.hidden, args.vocab)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for step, (source_ids, type_ids) in enumerate(loader):
        loss = model(source_ids, type_ids)
        loss = loss / args.accum  # expect: TL017
        loss.backward()
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def train_inline(args, model, loader, optimizer):
    for step, (tokens, targets, mask) in enumerate(loader):
        logits = model(tokens)
        active = mask.view(-1) == 1
        picked = targets.view(-1)[active]
        losses = nn.functional.cross_entropy(logits.view(-1, logits.size(-1))[active], picked, reduction="none")
        by_numel = losses.sum() / picked.numel()
        by_size = losses.sum() / picked.size(0)
        by_shape = losses.sum() / picked.shape[0]
        (by_numel / args.accum).backward(retain_graph=True)  # expect: TL017
        (by_size / args.accum).backward(retain_graph=True)  # expect: TL017
        (by_shape / args.accum).backward()  # expect: TL017
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
