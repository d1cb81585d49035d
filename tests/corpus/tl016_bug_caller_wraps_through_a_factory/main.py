import argparse

import torch

from engine import train_one_epoch
from util.distributed import unwrap_model, wrap_model


def main(args, model, data_loader):
    device = torch.device("cuda")
    if args.distributed:
        model = wrap_model(model, args.gpu)
    optimizer = torch.optim.AdamW(unwrap_model(model).parameters(), lr=1e-3)
    criterion = torch.nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        train_one_epoch(model, criterion, data_loader, optimizer, device, accum_iter=args.accum_iter)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--accum_iter", default=1, type=int)
    parser.add_argument("--distributed", action="store_true")
    main(parser.parse_args(), None, None)
