import torch

from engine import train_one_epoch
from util.updater import StepUpdater


def main(args):
    model = build_model(args)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    optimizer.zero_grad()
    for epoch in range(args.epochs):
        train_one_epoch(model, build_loader(args), updater=StepUpdater(optimizer), accum=args.accum)
