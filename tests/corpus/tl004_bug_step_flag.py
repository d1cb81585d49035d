"""Distributed fine-tuning that keeps its step condition in `is_accumulating`; the counter is 0-based."""
import torch
import torch.nn.functional as F


def fit(fabric, model, optimizer, dataloader, micro_batch_size=4, batch_size=16, max_steps=1000):
    iterable = enumerate(dataloader)
    steps = 0
    for i, (inputs, target) in iterable:
        is_accumulating = i % (batch_size // micro_batch_size) != 0  # expect: TL004, TL010
        with fabric.no_backward_sync(model, enabled=is_accumulating):
            output = model(inputs)
            loss = F.nll_loss(output, target) / (batch_size // micro_batch_size)
            fabric.backward(loss)
        if not is_accumulating:
            optimizer.step()
            optimizer.zero_grad()
            steps += 1
        if steps == max_steps:
            break
