import torch

from engine import finetune_one_epoch, train_one_epoch
from util.misc import NativeScalerWithGradNormCount


def main(args):
    model = build_model(args)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    criterion = torch.nn.CrossEntropyLoss()
    loss_scaler = NativeScalerWithGradNormCount()
    for epoch in range(args.epochs):
        train_one_epoch(model, criterion, data_loader, optimizer, loss_scaler)
        finetune_one_epoch(model, criterion, data_loader, optimizer, loss_scaler)
