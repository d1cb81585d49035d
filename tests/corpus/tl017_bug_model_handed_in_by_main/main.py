import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

from engine import train_one_epoch
from lm.meta import MetaModel


def main(args, data_loader):
    model = MetaModel(args.vocab, args.dim)
    if args.cuda:
        model = model.cuda()
    model = FSDP(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        train_one_epoch(model, data_loader, optimizer, None, args.accum_iter)
