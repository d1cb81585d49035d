import torch
from torch.nn.parallel import DistributedDataParallel as DDP

import engine

STAGES = {"train": engine.train_one_epoch}


def main(rank, net, loader, optimizer):
    model = DDP(net.to(rank), device_ids=[rank])
    engine.train_one_epoch(model, loader, optimizer, 4)
