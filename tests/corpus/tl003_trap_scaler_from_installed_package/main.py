import torch
from timm.utils import NativeScaler

from engine import train_one_epoch


def main(args):
    model = build_model(args)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    criterion = torch.nn.CrossEntropyLoss()
    loss_scaler = NativeScaler()
    for epoch in range(args.epochs):
        train_one_epoch(model, criterion, data_loader, optimizer, args.device, loss_scaler, args.accum_iter)
