"""The model is moved to its device inside the wrapper's call, `DDP(model.cuda(), ...)`: still the tagger of
the file, whose `forward` returns a mean over the micro-batch's labelled tokens, so dividing it by the
accumulation count weighs short batches' tokens more; the DDP model also all-reduces on every micro-batch
(TL016)."""
import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Tagger(nn.Module):
    def __init__(self, vocab, hidden, num_labels):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.head = nn.Linear(hidden, num_labels)

    def forward(self, input_ids, labels):
        logits = self.head(self.embed(input_ids))
        return nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=-100)


def train(args, loader, rank):
    model = Tagger(args.vocab, args.hidden, args.num_labels)
    model = DDP(model.cuda(rank), device_ids=[rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for step, (input_ids, labels) in enumerate(loader):
        loss = model(input_ids.cuda(rank), labels.cuda(rank))  # expect: TL016
        loss = loss / args.accum  # expect: TL017
        loss.backward()
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
