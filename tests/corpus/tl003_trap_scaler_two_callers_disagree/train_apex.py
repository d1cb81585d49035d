import torch

import engine
from util import misc


def main(args):
    model = build_model(args)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    engine.train_one_epoch(model, torch.nn.CrossEntropyLoss(), loader, optimizer, misc.ApexScaler(),
                           args.accum_iter)
