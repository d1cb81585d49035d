"""Token-count normalisation: each micro-batch's loss is summed over its tokens, the window's tokens are
counted, and the gradients are divided by that count before the step: the large batch's token mean."""
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, grad_accum=8):
    window_tokens = 0
    for step, (input_ids, labels) in enumerate(loader):
        logits = model(input_ids)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100,
                               reduction="sum")
        window_tokens += (labels != -100).sum()
        loss.backward()
        if (step + 1) % grad_accum == 0:
            for p in model.parameters():
                if p.grad is not None:
                    p.grad.div_(window_tokens)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            window_tokens = 0
