"""The scheduler has its own `if` on the same accumulation window as the optimizer."""
import torch


def train_epoch(model, dataloader, optimizer, lr_scheduler, gradient_accumulation_steps, logger):
    model.train()
    for step, batch in enumerate(dataloader):
        loss = model(**batch).loss / gradient_accumulation_steps
        loss.backward()
        if (step + 1) % gradient_accumulation_steps == 0 or step + 1 == len(dataloader):
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
        logger.log({"loss": loss.item() * gradient_accumulation_steps})
        if (step + 1) % gradient_accumulation_steps == 0:
            lr_scheduler.step()
