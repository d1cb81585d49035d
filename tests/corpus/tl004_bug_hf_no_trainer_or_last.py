"""The accumulation condition of early Hugging Face `*_no_trainer.py` scripts."""
import torch
from accelerate import Accelerator
from tqdm.auto import tqdm


def train(args, model, train_dataloader, lr_scheduler):
    accelerator = Accelerator()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    progress_bar = tqdm(range(args.max_train_steps))
    for epoch in range(args.num_train_epochs):
        model.train()
        for step, batch in enumerate(train_dataloader):
            outputs = model(**batch)
            loss = outputs.loss
            loss = loss / args.gradient_accumulation_steps
            accelerator.backward(loss)
            if step % args.gradient_accumulation_steps == 0 or step == len(train_dataloader) - 1:  # expect: TL004
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
                progress_bar.update(1)
