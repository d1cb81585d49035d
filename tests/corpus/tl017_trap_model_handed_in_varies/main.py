import torch

from engine import train_one_epoch
from lm.meta import MetaModel
from lm.vision import Classifier


def main_lm(args, data_loader):
    model = MetaModel(args.vocab, args.dim).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    train_one_epoch(model, data_loader, optimizer, None, args.accum_iter)


def main_vision(args, data_loader):
    model = Classifier(args.dim, args.classes)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    train_one_epoch(model, data_loader, optimizer, None, args.accum_iter)
