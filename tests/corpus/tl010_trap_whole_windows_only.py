"""The micro-batches of a last, partial window are skipped: only whole windows are trained on."""
import torch


def train_one_epoch(model, criterion, loader, optimizer, update_freq, steps_per_epoch):
    optimizer.zero_grad()
    for data_iter_step, (samples, targets) in enumerate(loader):
        step = data_iter_step // update_freq
        if step >= steps_per_epoch:
            continue
        loss = criterion(model(samples), targets)
        loss /= update_freq
        loss.backward()
        if (data_iter_step + 1) % update_freq == 0:
            optimizer.step()
            optimizer.zero_grad()
