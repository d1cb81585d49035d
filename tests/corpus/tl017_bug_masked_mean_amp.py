"""A masked-LM objective averaged over the masked positions of each micro-batch (their number varies),
then divided by the accumulation count under AMP."""
import torch
from torch import nn


def train(model, loader, accum_steps=16, epochs=1):
    per_token = nn.CrossEntropyLoss(reduction="none")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    scaler = torch.cuda.amp.GradScaler()
    for epoch in range(epochs):
        for it, (tokens, targets, mask) in enumerate(loader):
            with torch.cuda.amp.autocast():
                logits = model(tokens)
                losses = per_token(logits.transpose(1, 2), targets)
                loss = (losses * mask).sum() / mask.sum().clamp(min=1)
            scaler.scale(loss / accum_steps).backward()  # expect: TL017
            if (it + 1) % accum_steps == 0 or it + 1 == len(loader):
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
