"""Causal-LM fine-tuning with gradient accumulation, Hugging Face style."""
import torch
from tqdm.auto import tqdm
from transformers import get_linear_schedule_with_warmup


def train(args, model, train_dataloader):
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay)
    scheduler = get_linear_schedule_with_warmup(optimizer, args.warmup_steps, args.max_steps)
    model.train()
    for step, batch in enumerate(tqdm(train_dataloader, desc="Iteration")):
        batch = {k: v.to(args.device) for k, v in batch.items()}
        outputs = model(**batch)
        loss = outputs.loss
        loss.backward()  # expect: TL003
        if (step + 1) % args.gradient_accumulation_steps == 0:  # expect: TL010
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
