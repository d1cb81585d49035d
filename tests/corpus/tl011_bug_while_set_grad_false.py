"""Fine-tuning loop written after an eval loop: `set_grad_enabled(False)` came along."""
import torch
import torch.nn.functional as F


def finetune(model, batches, optimizer, max_steps):
    step = 0
    while step < max_steps:
        x, y = next(batches)
        with torch.set_grad_enabled(False):
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            loss.backward()  # expect: TL011
        optimizer.step()
        optimizer.zero_grad()
        step += 1
