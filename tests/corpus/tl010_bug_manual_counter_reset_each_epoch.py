"""A micro-batch count started again in each epoch and bumped before the test (1-based), as CodeT5's fine-tuning
scripts keep it: `nb_tr_steps % N == 0` cannot hold on the last micro-batch of an epoch whose length is not a
multiple of N, and nothing after the loop steps."""
import torch
from torch.utils.data import DataLoader, RandomSampler
from tqdm import tqdm


def train(args, model, train_data):
    train_dataloader = DataLoader(train_data, sampler=RandomSampler(train_data), batch_size=args.train_batch_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    for cur_epoch in range(args.num_train_epochs):
        bar = tqdm(train_dataloader, total=len(train_dataloader), desc="Training")
        nb_tr_examples, nb_tr_steps, tr_loss = 0, 0, 0
        model.train()
        for step, batch in enumerate(bar):
            source_ids, target_ids = batch
            loss = model(input_ids=source_ids, labels=target_ids).loss
            if args.gradient_accumulation_steps > 1:
                loss = loss / args.gradient_accumulation_steps
            tr_loss += loss.item()
            nb_tr_examples += source_ids.size(0)
            nb_tr_steps += 1
            loss.backward()
            if nb_tr_steps % args.gradient_accumulation_steps == 0:  # expect: TL010
                optimizer.step()
                optimizer.zero_grad()
