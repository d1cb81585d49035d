"""Chat fine-tuning: prompt and padding targets are set to -1 and ignored, so each micro-batch's loss is a
mean over a different number of answer tokens, and dividing it by `grad_accum_steps` weighs short answers
as much as long ones."""
import itertools

import torch
import torch.nn.functional as F


def finetune(model, batches, optimizer, grad_accum_steps=4, max_steps=1000):
    model.train()
    for step, (x, y) in enumerate(itertools.cycle(batches)):
        if step >= max_steps * grad_accum_steps:
            break
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1), ignore_index=-1)
        train_loss = loss.detach()
        loss = loss / grad_accum_steps  # expect: TL017
        loss.backward()
        if (step + 1) % grad_accum_steps == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            model.zero_grad(set_to_none=True)
