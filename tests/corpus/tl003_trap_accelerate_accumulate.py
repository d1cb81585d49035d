"""Accelerate's `accumulate()` scales the loss and gates the optimizer for you."""
import torch
from accelerate import Accelerator


def train(args, model, train_dataloader):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    completed_steps = 0
    for step, batch in enumerate(train_dataloader):
        with accelerator.accumulate(model):
            loss = model(**batch).loss
            accelerator.backward(loss)
            if accelerator.sync_gradients:
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
        if accelerator.sync_gradients:
            completed_steps += 1
