"""Accelerate's accumulate(): the prepared optimizer only resets and steps at the window boundary."""
import torch
from accelerate import Accelerator
from tqdm.auto import tqdm
from transformers import get_cosine_schedule_with_warmup


def train(args, model, train_dataset, collate_fn):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps, mixed_precision="bf16")
    loader = torch.utils.data.DataLoader(train_dataset, batch_size=args.per_device_batch_size,
                                         shuffle=True, collate_fn=collate_fn)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    scheduler = get_cosine_schedule_with_warmup(optimizer, args.warmup_steps, args.max_train_steps)
    model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)
    progress = tqdm(range(args.max_train_steps), disable=not accelerator.is_local_main_process)
    for epoch in range(args.num_train_epochs):
        model.train()
        for batch in loader:
            with accelerator.accumulate(model):
                optimizer.zero_grad()
                outputs = model(**batch)
                accelerator.backward(outputs.loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
            if accelerator.sync_gradients:
                progress.update(1)
