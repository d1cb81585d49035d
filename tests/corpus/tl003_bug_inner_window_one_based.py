"""Hugging Face causal LM, an inner loop counted from 1, the last micro-batch deciding the DDP sync."""
import torch


def train(model, batches, optimizer, scheduler, total_steps, accum):
    for update in range(total_steps):
        for i in range(1, accum + 1):
            batch = next(batches)
            model.require_backward_grad_sync = i == accum
            outputs = model(input_ids=batch["input_ids"], labels=batch["labels"])
            outputs.loss.backward()  # expect: TL003
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
