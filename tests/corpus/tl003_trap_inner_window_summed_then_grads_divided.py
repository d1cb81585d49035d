"""Token sums over the micro-batches, the gradients divided by the window's token count before the step."""
import torch
import torch.nn.functional as F


def train(model, optimizer, batches, steps, grad_accum):
    for step in range(steps):
        n_tokens = 0
        for _ in range(grad_accum):
            input_ids, labels = next(batches)
            logits = model(input_ids)
            loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=-100, reduction="sum")
            loss.backward()
            n_tokens += (labels != -100).sum()
        for p in model.parameters():
            if p.grad is not None:
                p.grad.div_(n_tokens)
        optimizer.step()
        optimizer.zero_grad()
