"""The criterion's reduction comes from the run's options: a sum-reduced loss needs no division, so the
reduction is not known here and the undivided backward is not a finding."""
import argparse

import torch
import torch.nn as nn


def train(model, loader, args):
    criterion = nn.CrossEntropyLoss(reduction=args.reduction)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        if (i + 1) % args.accum == 0 or i + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--reduction", default="sum", choices=["sum", "mean"])
    parser.add_argument("--accum", type=int, default=4)
