"""1-based step counter from `enumerate(..., start=1)`; the condition never holds on a short tail."""
import torch
import torch.nn.functional as F


def train(model, train_loader, epochs, accumulation_steps=16):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for step, (src, tgt) in enumerate(train_loader, start=1):
            logits = model(src, tgt[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1))
            (loss / accumulation_steps).backward()
            if step % accumulation_steps == 0:  # expect: TL010
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad()
