"""The script's own folder holds a package of the same name as the project's `src/` one, and Python imports
the one beside the script first: its tagger sums the token losses, so dividing by the accumulation count
is right, and the token-mean tagger under `src/` is not the one this script trains."""
import torch

from nertools.models import Tagger


def main(args, encoder, loader):
    model = Tagger(encoder, args.hidden, args.num_labels)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for step, (input_ids, mask, labels) in enumerate(loader):
        loss, _ = model(input_ids, mask, labels)
        loss = loss / args.accum
        loss.backward()
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
