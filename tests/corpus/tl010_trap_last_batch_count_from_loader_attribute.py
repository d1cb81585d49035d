"""The step also runs on the epoch's last micro-batch, tested against a count the loaders carry
(`loader.num_batches`, webdataset-style) rather than `len(loader)`; the loop walks a `zip` of two loaders,
which has no length of its own. The author wrote the end test: nothing says it misses the end."""
import torch
import torch.nn.functional as F


def train_one_epoch(model, optimizer, laion_loader, mmc4_loader, accumulation_steps):
    num_batches_per_epoch_laion = laion_loader.num_batches
    num_batches_per_epoch = mmc4_loader.num_batches
    assert num_batches_per_epoch == num_batches_per_epoch_laion
    for num_steps, (batch_a, batch_b) in enumerate(zip(laion_loader, mmc4_loader)):
        loss = F.cross_entropy(model(batch_a[0]), batch_a[1]) + F.cross_entropy(model(batch_b[0]), batch_b[1])
        (loss / accumulation_steps).backward()
        if ((num_steps + 1) % accumulation_steps == 0) or (num_steps == num_batches_per_epoch - 1):
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)


def train_steps_known_before(model, optimizer, loader, accum, steps_per_epoch):
    # `steps_per_epoch` comes from the caller; `is_last` holds the test, one-based on the other side.
    for step, (x, y) in enumerate(loader):
        (F.mse_loss(model(x), y) / accum).backward()
        is_last = step + 1 == steps_per_epoch
        if (step + 1) % accum == 0 or is_last:
            optimizer.step()
            optimizer.zero_grad()


def train_at_least(model, optimizer, loader, accum, cfg):
    total = cfg.train.iters_per_epoch
    for i, (x, y) in enumerate(loader):
        (F.mse_loss(model(x), y) / accum).backward()
        if (i + 1) % accum == 0 or i >= total - 1:
            optimizer.step()
            optimizer.zero_grad()
