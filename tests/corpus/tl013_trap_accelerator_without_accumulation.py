"""The classic `*_no_trainer.py` loop: `Accelerator()` is built without `gradient_accumulation_steps`,
so `accelerator.backward` divides by 1 and the manual division is the only one."""
import math

import torch
from accelerate import Accelerator
from transformers import AutoModelForSequenceClassification, get_scheduler


def main(args, train_dataloader):
    accelerator = Accelerator()
    model = AutoModelForSequenceClassification.from_pretrained(args.model_name_or_path, num_labels=2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    num_update_steps_per_epoch = math.ceil(len(train_dataloader) / args.gradient_accumulation_steps)
    lr_scheduler = get_scheduler("linear", optimizer=optimizer, num_warmup_steps=0,
                                 num_training_steps=args.num_train_epochs * num_update_steps_per_epoch)
    model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, lr_scheduler)
    for epoch in range(args.num_train_epochs):
        model.train()
        for step, batch in enumerate(train_dataloader):
            outputs = model(**batch)
            loss = outputs.loss
            loss = loss / args.gradient_accumulation_steps
            accelerator.backward(loss)
            if step % args.gradient_accumulation_steps == args.gradient_accumulation_steps - 1 \
                    or step == len(train_dataloader) - 1:
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
