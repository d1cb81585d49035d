"""Token-count normalisation: each loss times its token count, the gradients divided by the window's count."""
import torch
from torch import nn


def train(model, loader, optimizer, accum_steps, ignore_index=-100):
    criterion = nn.CrossEntropyLoss(ignore_index=ignore_index)
    num_tokens = 0
    for epoch in range(3):
        for idx, batch in enumerate(loader):
            tokens = (batch["labels"] != ignore_index).sum()
            num_tokens += tokens
            logits = model(batch["input_ids"])
            loss = criterion(logits.flatten(0, 1), batch["labels"].flatten()) * tokens
            loss.backward()
            if (idx + 1) % accum_steps == 0:
                for p in model.parameters():
                    if p.grad is not None:
                        p.grad.div_(num_tokens)
                optimizer.step()
                optimizer.zero_grad()
                num_tokens = 0
