import torch

import engine
from util import updaters


def main(args):
    model = build_model(args)
    engine.train_one_epoch(model, build_loader(args), updaters.EveryStepUpdater(torch.optim.SGD(model.parameters(), lr=args.lr)),
                           args.log_every)
