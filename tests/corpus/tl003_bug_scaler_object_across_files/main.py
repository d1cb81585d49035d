import torch
import torch.nn as nn

from engine import train_one_epoch
from util.misc import NativeScalerWithGradNormCount as NativeScaler


def main(args):
    device = torch.device(args.device)
    model = build_model(args).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    loss_scaler = NativeScaler()
    data_loader = build_loader(args)
    for epoch in range(args.epochs):
        train_one_epoch(model, criterion, data_loader, optimizer, device, epoch, loss_scaler, args=args)
