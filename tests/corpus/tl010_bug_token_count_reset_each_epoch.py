"""Token-count normalisation whose count starts again every epoch while the gradients of the epoch's last,
partial window run on: the next epoch's first window divides their gradients by a count that does not
include their tokens."""
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, epochs=3, grad_accum=8):
    for epoch in range(epochs):
        window_tokens = 0
        for step, (input_ids, labels) in enumerate(loader):
            logits = model(input_ids)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100,
                                   reduction="sum")
            window_tokens += (labels != -100).sum()
            loss.backward()
            if (step + 1) % grad_accum == 0:  # expect: TL010
                for p in model.parameters():
                    if p.grad is not None:
                        p.grad.div_(window_tokens)
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                window_tokens = 0
