"""A causal LM on packed blocks (`group_texts`, `default_data_collator`): every micro-batch holds the same
number of tokens, so dividing the mean by the accumulation count is the window's token mean."""
import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, default_data_collator


def main(args, lm_datasets):
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)
    train_dataloader = DataLoader(lm_datasets["train"], shuffle=True, collate_fn=default_data_collator,
                                  batch_size=args.per_device_train_batch_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    for epoch in range(args.num_train_epochs):
        model.train()
        for step, batch in enumerate(train_dataloader):
            outputs = model(**batch)
            loss = outputs.loss / args.gradient_accumulation_steps
            loss.backward()
            if (step + 1) % args.gradient_accumulation_steps == 0 or step + 1 == len(train_dataloader):
                optimizer.step()
                optimizer.zero_grad()
