"""An epoch function over fastprogress's `progress_bar(range(n))` whose window is read from the module's own
`config`, set to one micro-batch: every micro-batch steps."""
import types

import torch
from fastprogress import master_bar, progress_bar

config = types.SimpleNamespace(batches_per_epoch=500, learning_rate=1e-3, max_epochs=3)
config.accumulation_steps = 1


def train_one_epoch(net, optimizer, loader, parent):
    net.train()
    accumulation_steps = config.accumulation_steps
    batches = iter(loader)
    for batch_num in progress_bar(range(config.batches_per_epoch), parent=parent):
        x, y = next(batches)
        loss = torch.nn.functional.mse_loss(net(x), y) / accumulation_steps
        loss.backward()
        if (batch_num + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()


def main(net, loader):
    optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate)
    epoch_bar = master_bar(range(config.max_epochs))
    for epoch in epoch_bar:
        train_one_epoch(net, optimizer, loader, epoch_bar)
