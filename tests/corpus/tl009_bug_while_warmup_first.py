"""Iteration-based loop that updates the learning rate at the top of each iteration."""
import torch
from torch.optim.lr_scheduler import LambdaLR


def train(model, batches, total_iters, warmup=1000, base_lr=6e-4):
    optimizer = torch.optim.AdamW(model.parameters(), lr=base_lr, betas=(0.9, 0.95))
    warmup_sched = LambdaLR(optimizer, lambda it: min(1.0, (it + 1) / warmup))
    it = 0
    while it < total_iters:
        warmup_sched.step()  # expect: TL009
        x, y = next(batches)
        logits, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        it += 1
