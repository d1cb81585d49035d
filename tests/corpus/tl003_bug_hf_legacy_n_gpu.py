"""Older `transformers` example loop: tuple outputs and DataParallel averaging, no division."""
import torch
from tqdm import tqdm, trange


def train(args, model, train_dataloader, optimizer, scheduler):
    global_step, tr_loss = 0, 0.0
    model.zero_grad()
    for _ in trange(int(args.num_train_epochs), desc="Epoch"):
        epoch_iterator = tqdm(train_dataloader, desc="Iteration")
        for step, batch in enumerate(epoch_iterator):
            model.train()
            batch = tuple(t.to(args.device) for t in batch)
            inputs = {"input_ids": batch[0], "attention_mask": batch[1], "labels": batch[3]}
            outputs = model(**inputs)
            loss = outputs[0]
            if args.n_gpu > 1:
                loss = loss.mean()
            loss.backward()  # expect: TL003
            tr_loss += loss.item()
            if (step + 1) % args.gradient_accumulation_steps == 0 or step + 1 == len(epoch_iterator):
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                optimizer.step()
                scheduler.step()
                model.zero_grad()
                global_step += 1
    return global_step, tr_loss / global_step
