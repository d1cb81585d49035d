"""An example script of a project laid out with its package under `src/` (`src/nertools/`, installed with
`pip install -e .`): the script imports the tagger from the package, whose `forward` returns a mean over the
micro-batch's active tokens, so dividing it by the accumulation count weighs short batches' tokens more."""
import torch

from nertools.models import Tagger


def main(args, encoder, loader):
    model = Tagger(encoder, args.hidden, args.num_labels)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for step, (input_ids, mask, labels) in enumerate(loader):
        loss, _ = model(input_ids, mask, labels)
        loss = loss / args.accum  # expect: TL017
        loss.backward()
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
