"""Hugging Face-style fine-tuning: the reset at the top of the loop undoes the accumulation."""
import torch
from tqdm.auto import tqdm
from transformers import get_linear_schedule_with_warmup


def train(args, model, train_dataloader):
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    num_update_steps = len(train_dataloader) // args.gradient_accumulation_steps * args.num_train_epochs
    scheduler = get_linear_schedule_with_warmup(optimizer, args.warmup_steps, num_update_steps)
    global_step = 0
    for epoch in range(args.num_train_epochs):
        model.train()
        for step, batch in enumerate(tqdm(train_dataloader, desc=f"Epoch {epoch}")):
            optimizer.zero_grad()  # expect: TL007
            batch = {k: v.to(args.device) for k, v in batch.items()}
            outputs = model(**batch)
            loss = outputs.loss / args.gradient_accumulation_steps
            loss.backward()
            if (step + 1) % args.gradient_accumulation_steps == 0 or step == len(train_dataloader) - 1:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                optimizer.step()
                scheduler.step()
                global_step += 1
