"""`train_one_epoch` accumulates `accum_iter` micro-batches of the model `main.py` wraps through
`util.distributed.wrap_model` when `args.distributed` is set, with no `no_sync()`."""
import torch


def train_one_epoch(model, criterion, data_loader, optimizer, device, accum_iter=1):
    model.train(True)
    optimizer.zero_grad()
    for data_iter_step, (samples, targets) in enumerate(data_loader):
        samples = samples.to(device, non_blocking=True)
        with torch.autocast("cuda"):
            outputs = model(samples)  # expect: TL016
            loss = criterion(outputs, targets.to(device)) / accum_iter
        loss.backward()
        if (data_iter_step + 1) % accum_iter == 0 or data_iter_step + 1 == len(data_loader):
            optimizer.step()
            optimizer.zero_grad()
