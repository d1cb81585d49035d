"""Older `transformers` example loop, with both adjustments of the loss."""
import torch
from tqdm import tqdm


def train(args, model, train_dataloader, optimizer, scheduler):
    global_step, tr_loss = 0, 0.0
    model.zero_grad()
    for epoch in range(int(args.num_train_epochs)):
        epoch_iterator = tqdm(train_dataloader, desc="Iteration")
        for step, batch in enumerate(epoch_iterator):
            outputs = model(**batch)
            loss = outputs[0]
            if args.n_gpu > 1:
                loss = loss.mean()
            if args.gradient_accumulation_steps > 1:
                loss = loss / args.gradient_accumulation_steps
            loss.backward()
            tr_loss += loss.item()
            if (step + 1) % args.gradient_accumulation_steps == 0 or step + 1 == len(epoch_iterator):
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                optimizer.step()
                scheduler.step()
                model.zero_grad()
                global_step += 1
    return global_step, tr_loss / max(global_step, 1)
