import torch

from engine import evaluate_windows
from util.misc import LossHistory


def main(args):
    model = build_model(args)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    history = LossHistory()
    evaluate_windows(model, torch.nn.CrossEntropyLoss(), data_loader, optimizer, history, args.accum_iter)
