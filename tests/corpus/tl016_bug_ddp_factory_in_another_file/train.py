"""The yolov3 family: `model = smart_DDP(model)` under `if cuda and RANK != -1:` (a factory of utils/torch_utils.py
returning DDP), a window counted since the last step, the loader behind Ultralytics' `TQDM` progress bar, and
no `no_sync()`: every micro-batch all-reduces the gradients when the script runs distributed."""
import os

import torch
from ultralytics.utils import TQDM

from utils.torch_utils import de_parallel, smart_DDP

RANK = int(os.getenv("RANK", -1))


def train(model, train_loader, optimizer, scaler, compute_loss, epochs, batch_size, cuda):
    nbs = 64
    accumulate = max(round(nbs / batch_size), 1)
    if cuda and RANK != -1:
        model = smart_DDP(model)
    nl = de_parallel(model).nl
    last_opt_step = -1
    nb = len(train_loader)
    for epoch in range(epochs):
        model.train()
        pbar = enumerate(train_loader)
        if RANK in {-1, 0}:
            pbar = TQDM(pbar, total=nb)
        optimizer.zero_grad()
        for i, (imgs, targets) in pbar:
            ni = i + nb * epoch
            with torch.autocast("cuda"):
                pred = model(imgs)  # expect: TL016
                loss = compute_loss(pred, targets) / accumulate
            scaler.scale(loss).backward()
            if ni - last_opt_step >= accumulate:  # expect: TL010
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=10.0)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
                last_opt_step = ni
    return nl
