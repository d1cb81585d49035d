import torch

from engine import train_one_epoch
from util.misc import NativeScalerWithGradNormCount


def main(args):
    model = build_model(args)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    scaler = NativeScalerWithGradNormCount()
    train_one_epoch(model, torch.nn.CrossEntropyLoss(), loader, optimizer, scaler, args.accum_iter)
