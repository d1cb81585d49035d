import argparse

import torch

from engine import train_one_epoch


def get_args_parser():
    parser = argparse.ArgumentParser("fine-tuning")
    parser.add_argument("--accum_iter", default=1, type=int)
    parser.add_argument("--distributed", action="store_true")
    parser.add_argument("--gpu", default=0, type=int)
    return parser


def main(args, build_model, data_loader_train):
    device = torch.device("cuda")
    model = build_model()
    model.to(device)
    model_without_ddp = model
    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
        model_without_ddp = model.module
    optimizer = torch.optim.AdamW(model_without_ddp.parameters(), lr=1e-3)
    criterion = torch.nn.CrossEntropyLoss()
    for epoch in range(10):
        train_one_epoch(model, criterion, data_loader_train, optimizer, device, epoch, accum_iter=args.accum_iter)
        torch.save(model_without_ddp.state_dict(), f"checkpoint-{epoch}.pth")


if __name__ == "__main__":
    main(get_args_parser().parse_args(), None, None)
