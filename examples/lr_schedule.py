"""Warm-up plus cosine decay with gradient accumulation, the way many fine-tuning scripts do it.

Carries TL009 (the scheduler advances on every micro-batch while the optimizer steps once per
window) in `finetune`, and TL010 (the last partial window of each epoch is never applied) in
`pretrain`.
"""

import torch
from transformers import get_cosine_schedule_with_warmup


def finetune(model, train_dataloader, args):
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    updates = len(train_dataloader) // args.gradient_accumulation_steps * args.epochs
    lr_scheduler = get_cosine_schedule_with_warmup(optimizer, num_warmup_steps=updates // 10,
                                                   num_training_steps=updates)
    for epoch in range(args.epochs):
        for step, batch in enumerate(train_dataloader):
            loss = model(**batch).loss / args.gradient_accumulation_steps
            loss.backward()
            lr_scheduler.step()
            if (step + 1) % args.gradient_accumulation_steps == 0 or step == len(train_dataloader) - 1:
                optimizer.step()
                optimizer.zero_grad()


def pretrain(model, loader, epochs: int, accum: int = 16):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(epochs):
        for i, (tokens, labels) in enumerate(loader):
            logits = model(tokens)
            loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten()) / accum
            loss.backward()
            if (i + 1) % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
