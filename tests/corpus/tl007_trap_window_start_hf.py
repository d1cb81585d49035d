"""The window opens with a reset when `step % accumulation == 0`: before the first backward of it."""
import torch


def train_epoch(args, model, dataloader, optimizer, lr_scheduler):
    model.train()
    total = 0.0
    for step, batch in enumerate(dataloader):
        if step % args.gradient_accumulation_steps == 0:
            optimizer.zero_grad()
        loss = model(**batch).loss
        total += loss.item()
        (loss / args.gradient_accumulation_steps).backward()
        if (step + 1) % args.gradient_accumulation_steps == 0 or step + 1 == len(dataloader):
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            optimizer.step()
            lr_scheduler.step()
    return total / len(dataloader)
