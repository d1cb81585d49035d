"""The forward of the DDP model runs in a helper the loop calls with the model (`train_class_batch(model,
samples, targets, criterion)` running `outputs = model(samples)`, the finetuning engines' shape). The
all-reduce of every micro-batch is armed there, outside any `no_sync()`."""
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def train_class_batch(model, samples, target, criterion):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        outputs = model(samples)
    loss = criterion(outputs, target)
    return loss, outputs


def train_one_epoch(rank, net, loader, optimizer, criterion, update_freq):
    model = DDP(net.to(rank), device_ids=[rank])
    optimizer.zero_grad()
    for step, (samples, targets) in enumerate(loader):
        loss, output = train_class_batch(model, samples, targets, criterion)  # expect: TL016
        (loss / update_freq).backward()
        if (step + 1) % update_freq == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
