import torch

from engine import train_one_epoch
from util.updater import GradUpdater


def main(args):
    model = build_model(args)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    updater = GradUpdater(optimizer)
    loader = build_loader(args)
    for epoch in range(args.epochs):
        train_one_epoch(model, loader, updater, args.accum)
