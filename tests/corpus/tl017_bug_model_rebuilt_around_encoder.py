"""`main` loads a pretrained encoder into `model`, then rebinds `model` to the file's generator built around
it, and hands it to `train` under that name: what reaches the call is the generator, whose `forward` returns a
mean over the micro-batch's target tokens (the encoder's binding no longer holds there), so dividing it by the
accumulation count weighs short targets' tokens more."""
import torch
import torch.nn as nn
from transformers import RobertaModel


class Generator(nn.Module):
    def __init__(self, encoder, hidden, vocab):
        super().__init__()
        self.encoder = encoder
        self.lm_head = nn.Linear(hidden, vocab)

    def forward(self, source_ids, target_mask):
        logits = self.lm_head(self.encoder(source_ids)[0])
        active = target_mask.view(-1) != 0
        return nn.functional.cross_entropy(logits.view(-1, logits.size(-1))[active], source_ids.view(-1)[active])


def train(args, model, loader):
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    if args.n_gpu > 1:
        model = torch.nn.DataParallel(model)
    for step, (source_ids, target_mask) in enumerate(loader):
        loss = model(source_ids, target_mask)
        loss = loss / args.accum  # expect: TL017
        loss.backward()
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def main(args, loader):
    model = RobertaModel.from_pretrained(args.name)
    model = Generator(model, args.hidden, args.vocab)
    train(args, model, loader)
