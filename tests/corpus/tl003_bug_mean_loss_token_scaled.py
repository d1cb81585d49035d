"""The gradients are divided by the window's token count, but the distillation loss is a plain mean."""
import torch
from torch import nn


def scale_gradients(model, factor):
    for p in model.parameters():
        if p.grad is not None:
            p.grad.mul_(factor)


def distill(student, teacher, loader, optimizer, accum, kd_ratio=0.5):
    ce = nn.CrossEntropyLoss(ignore_index=-100)
    num_tokens = 0
    for idx, batch in enumerate(loader):
        num_tokens += (batch["labels"] != -100).sum()
        logits = student(batch["input_ids"])
        with torch.no_grad():
            targets = teacher(batch["input_ids"]).softmax(-1)
        class_loss = ce(logits.flatten(0, 1), batch["labels"].flatten())
        kd_loss = -(targets * logits.log_softmax(-1)).sum(-1).mean()
        loss = (1 - kd_ratio) * class_loss + kd_ratio * kd_loss
        loss.backward()  # expect: TL003
        if (idx + 1) % accum == 0 or idx + 1 == len(loader):
            scale_gradients(student, 1 / num_tokens)
            optimizer.step()
            optimizer.zero_grad()
            num_tokens = 0
