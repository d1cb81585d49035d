"""A notebook's epoch function over fastprogress's `progress_bar(range(n))`, its window read from the `config` it
is given: `config.accumulation_steps = 1` on the module's `config` (set only for visualisation) says nothing of
the parameter's. The last, partial window of each epoch is never stepped."""
import json

import torch
from fastprogress import master_bar, progress_bar


def get_config(path):
    with open(path) as handle:
        return json.load(handle)


viz_mode = False
config = get_config("configs/default.json")
if viz_mode:
    config.batch_size = 1
    config.accumulation_steps = 1


def train_one_epoch(net, optimizer, config, master_bar):
    net.train()
    batches_per_epoch = config.batches_per_epoch
    accumulation_steps = config.accumulation_steps
    dataset = iter(config.reader())
    for batch_num in progress_bar(range(batches_per_epoch), parent=master_bar):
        try:
            batch = next(dataset)
        except StopIteration:
            break
        y_preds, loss = net.forward(batch.x, batch.y)
        loss = loss.mean()
        loss = loss / accumulation_steps
        loss.backward()
        if (batch_num + 1) % accumulation_steps == 0:  # expect: TL010
            optimizer.step()
            optimizer.zero_grad()


def main(config, net):
    optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate)
    epoch_bar = master_bar(range(config.max_epochs))
    for epoch in epoch_bar:
        train_one_epoch(net, optimizer, config, epoch_bar)
