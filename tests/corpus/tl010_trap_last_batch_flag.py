"""timm-style: the last batch is named before the loop and folded into the update condition."""
import torch


def train_one_epoch(model, loader, optimizer, loss_fn, accum_steps=2):
    model.train()
    last_idx = len(loader) - 1
    for batch_idx, (input, target) in enumerate(loader):
        last_batch = batch_idx == last_idx
        output = model(input)
        loss = loss_fn(output, target) / accum_steps
        loss.backward()
        if (batch_idx + 1) % accum_steps == 0 or last_batch:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            optimizer.zero_grad()
