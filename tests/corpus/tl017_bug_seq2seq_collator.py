"""A `*_no_trainer.py` summarisation script: `DataCollatorForSeq2Seq` pads the labels with -100, so the
model's loss is a mean over each micro-batch's real target tokens, and dividing it by
`gradient_accumulation_steps` weighs short summaries' tokens more. (`Accelerator()` is built without
`gradient_accumulation_steps`: it does not divide again.)"""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import AutoModelForSeq2SeqLM, DataCollatorForSeq2Seq


def main(args, tokenizer, train_dataset):
    accelerator = Accelerator()
    model = AutoModelForSeq2SeqLM.from_pretrained(args.model_name_or_path)
    data_collator = DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=-100)
    train_dataloader = DataLoader(train_dataset, shuffle=True, collate_fn=data_collator,
                                  batch_size=args.per_device_train_batch_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    for epoch in range(args.num_train_epochs):
        model.train()
        for step, batch in enumerate(train_dataloader):
            outputs = model(**batch)
            loss = outputs.loss
            loss = loss / args.gradient_accumulation_steps  # expect: TL017
            accelerator.backward(loss)
            if step % args.gradient_accumulation_steps == args.gradient_accumulation_steps - 1 \
                    or step == len(train_dataloader) - 1:
                optimizer.step()
                optimizer.zero_grad()
