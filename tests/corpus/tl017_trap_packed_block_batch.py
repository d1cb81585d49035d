"""Pre-training on packed blocks: each batch row is one block of block_size + 1 token ids, inputs and targets cut
from it along the last axis, so every micro-batch holds the same number of targets."""
import torch
import torch.nn.functional as F


def train(fabric, model, optimizer, train_dataloader, grad_accum_steps, max_iters):
    for iter_num, train_data in enumerate(train_dataloader):
        if iter_num >= max_iters:
            break
        input_ids = train_data[:, 0 : model.config.block_size].contiguous()
        targets = train_data[:, 1 : model.config.block_size + 1].contiguous()
        is_accumulating = (iter_num + 1) % grad_accum_steps != 0
        with fabric.no_backward_sync(model, enabled=is_accumulating):
            logits = model(input_ids)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
            fabric.backward(loss / grad_accum_steps)
        if not is_accumulating:
            optimizer.step()
            optimizer.zero_grad()
    optimizer.step()
    optimizer.zero_grad()
