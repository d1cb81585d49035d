"""AMP and DDP: the forward runs under autocast only, which leaves DDP's synchronisation on."""
import torch
import torch.nn as nn


def main(net, loader, optimizer, local_rank, accum_iter, epochs):
    model = nn.parallel.DistributedDataParallel(net.cuda(local_rank), device_ids=[local_rank])
    scaler = torch.amp.GradScaler("cuda")
    criterion = nn.MSELoss()
    for epoch in range(epochs):
        for it, (x, y) in enumerate(loader, start=1):
            with torch.autocast("cuda", dtype=torch.float16):
                pred = model(x.cuda(local_rank))  # expect: TL016
                loss = criterion(pred, y.cuda(local_rank)) / accum_iter
            scaler.scale(loss).backward()
            if it % accum_iter == 0 or it == len(loader):
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
