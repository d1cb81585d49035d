"""DDP training script with gradient accumulation and no `no_sync()`: every micro-batch all-reduces."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def train(model, loader, optimizer, epochs, accum_steps):
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for i, (images, labels) in enumerate(loader):
            images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
            loss = criterion(model(images), labels) / accum_steps  # expect: TL016
            loss.backward()
            if (i + 1) % accum_steps == 0 or i + 1 == len(loader):
                optimizer.step()
                optimizer.zero_grad()


def main(build_model, build_loader, args):
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = build_model().cuda(local_rank)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    train(model, build_loader(args), optimizer, args.epochs, args.accum_steps)
    dist.destroy_process_group()
