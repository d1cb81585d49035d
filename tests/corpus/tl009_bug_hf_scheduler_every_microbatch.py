"""Linear warm-up schedule stepped on every micro-batch while the optimizer steps per window."""
import torch
from tqdm import tqdm
from transformers import get_linear_schedule_with_warmup


def train(args, model, train_dataloader):
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    t_total = len(train_dataloader) // args.gradient_accumulation_steps * args.num_train_epochs
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=args.warmup_steps,
                                                num_training_steps=t_total)
    model.zero_grad()
    for _ in range(args.num_train_epochs):
        for step, batch in enumerate(tqdm(train_dataloader)):
            outputs = model(**batch)
            loss = outputs.loss / args.gradient_accumulation_steps
            loss.backward()
            scheduler.step()  # expect: TL009
            if (step + 1) % args.gradient_accumulation_steps == 0 or step == len(train_dataloader) - 1:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                optimizer.step()
                model.zero_grad()
