import deepspeed
import torch
import torch.nn as nn

from engine_for_finetuning import train_one_epoch
from util.misc import NativeScalerWithGradNormCount as NativeScaler


def main(args, model, data_loader):
    criterion = nn.CrossEntropyLoss()
    if args.enable_deepspeed:
        loss_scaler = None
        model, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
    else:
        model.to(args.device)
        if args.distributed:
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
        loss_scaler = NativeScaler()
    for epoch in range(args.epochs):
        train_one_epoch(model, criterion, data_loader, optimizer, loss_scaler, args.update_freq)
