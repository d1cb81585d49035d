"""Accelerate loop: the prepared optimizer still applies whatever `.grad` holds when it steps."""
from accelerate import Accelerator
from torch.optim import AdamW
from transformers import get_linear_schedule_with_warmup


def main(args, model, train_dataloader):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
    optimizer = AdamW(model.parameters(), lr=args.learning_rate)
    lr_scheduler = get_linear_schedule_with_warmup(optimizer, args.num_warmup_steps, args.max_train_steps)
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
                optimizer.zero_grad()  # expect: TL006
                optimizer.step()
                lr_scheduler.step()
