"""Hugging Face `no_trainer` style fine-tuning; Accelerate does not reset gradients."""
import torch
from accelerate import Accelerator
from transformers import AutoModelForSequenceClassification, get_scheduler


def main(args, train_dataloader):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
    model = AutoModelForSequenceClassification.from_pretrained(args.model_name_or_path)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    lr_scheduler = get_scheduler(
        "linear", optimizer=optimizer, num_warmup_steps=0, num_training_steps=args.max_train_steps
    )
    model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, lr_scheduler
    )
    for epoch in range(args.num_train_epochs):
        model.train()
        for step, batch in enumerate(train_dataloader):
            with accelerator.accumulate(model):
                outputs = model(**batch)
                loss = outputs.loss
                accelerator.backward(loss)
                optimizer.step()  # expect: TL002
                lr_scheduler.step()
