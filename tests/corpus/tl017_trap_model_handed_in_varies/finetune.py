import timm
import torch

from engine import train_one_epoch


def finetune(args, data_loader):
    model = timm.create_model(args.model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    train_one_epoch(model, data_loader, optimizer, None, args.accum_iter)
