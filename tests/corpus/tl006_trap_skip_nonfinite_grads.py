"""Clears the gradients of a batch whose gradient norm blew up, and skips its step."""
import math

import torch
import torch.nn.functional as F


def train_epoch(model, loader, optimizer, max_norm=1.0):
    model.train()
    skipped = 0
    for batch in loader:
        logits = model(batch["input_ids"], attention_mask=batch["attention_mask"])
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), batch["labels"].view(-1), ignore_index=-100)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        if not math.isfinite(grad_norm.item()):
            optimizer.zero_grad(set_to_none=True)
            skipped += 1
            continue
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return skipped
