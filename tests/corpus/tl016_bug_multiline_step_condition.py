"""DDP gradient accumulation with its step condition written over several commented lines."""
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def train(model, loader, optimizer, accum, rank):
    model = DDP(model, device_ids=[rank])
    for epoch in range(3):
        for step, (x, y) in enumerate(loader):
            loss = torch.nn.functional.mse_loss(model(x), y) / accum  # expect: TL016
            loss.backward()
            if (
                (step + 1) % accum == 0  # end of a window
                or step + 1 == len(loader)  # or the epoch's last batch
            ):
                optimizer.step()
                optimizer.zero_grad()
