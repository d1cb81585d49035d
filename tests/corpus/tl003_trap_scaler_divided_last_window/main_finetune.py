import torch

from engine_finetune import train_one_epoch
from util.misc import NativeScalerWithGradNormCount as NativeScaler


def main(args):
    model = build_model(args)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    criterion = torch.nn.CrossEntropyLoss()
    loss_scaler = NativeScaler()
    for epoch in range(args.epochs):
        train_one_epoch(model, criterion, data_loader_train, optimizer, args.device, epoch,
                        loss_scaler=loss_scaler, max_norm=args.clip_grad, args=args)
