"""The loop's own function wraps the model in DDP only under a user option: a latent all-reduce per micro-batch
for whoever turns `--ddp` on."""
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def train(args, model, loader):
    model = model.to(args.device)
    if args.ddp:
        model = DDP(model, device_ids=[args.local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for step, batch in enumerate(loader):
        loss = model(**batch).loss / args.accum  # expect: TL016
        loss.backward()
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
