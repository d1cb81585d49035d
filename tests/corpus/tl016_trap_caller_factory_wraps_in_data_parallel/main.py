import torch

from engine import train_one_epoch
from util.parallel import parallelize


def main(args, model, data_loader):
    if torch.cuda.device_count() > 1:
        model = parallelize(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        train_one_epoch(model, torch.nn.CrossEntropyLoss(), data_loader, optimizer, accum_iter=args.accum_iter)
