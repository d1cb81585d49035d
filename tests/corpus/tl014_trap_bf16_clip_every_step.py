"""bf16 autocast needs no GradScaler: clipping the raw gradients before every step is right."""
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, scheduler, max_norm=1.0, device="cuda"):
    model.train()
    for it, (tokens, targets) in enumerate(loader):
        tokens, targets = tokens.to(device), targets.to(device)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            logits = model(tokens)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
