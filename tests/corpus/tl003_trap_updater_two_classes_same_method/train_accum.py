import torch

from engine import train_one_epoch
from util.updaters import GradUpdater


def main(args):
    model = build_model(args)
    updater = GradUpdater(torch.optim.AdamW(model.parameters(), lr=args.lr))
    train_one_epoch(model, build_loader(args), updater, args.accum)
