"""Two tasks take turns by dataset, not by micro-batch: the generator's `parity` is `task_id % 2` for every
batch of a task. Each micro-batch is applied by its own task's optimizer at once (the gradients are reset before
every backward): nothing accumulates, so the mean loss needs no division."""
import torch
import torch.nn.functional as F


def task_batches(loaders, num_tasks):
    for task_id, loader in enumerate(loaders):
        for batch in loader:
            yield {"parity": task_id % num_tasks}, batch


def train(encoder, heads, loaders):
    opt_a = torch.optim.Adam(list(encoder.parameters()) + list(heads[0].parameters()), lr=1e-4)
    opt_b = torch.optim.Adam(list(encoder.parameters()) + list(heads[1].parameters()), lr=1e-4)
    for meta, (x, y) in task_batches(loaders, 2):
        opt_a.zero_grad()
        opt_b.zero_grad()
        head = heads[meta["parity"]]
        loss = F.cross_entropy(head(encoder(x)), y)
        loss.backward()
        if meta["parity"] == 0:
            opt_a.step()
        else:
            opt_b.step()
