"""Hugging Face-style loop with accumulation; `tr_loss` adds the scaled loss tensor itself."""
import torch


def train(args, model, train_dataloader, optimizer, scheduler):
    tr_loss, logging_loss = 0.0, 0.0
    global_step = 0
    model.zero_grad()
    for epoch in range(int(args.num_train_epochs)):
        for step, batch in enumerate(train_dataloader):
            model.train()
            batch = tuple(t.to(args.device) for t in batch)
            inputs = {"input_ids": batch[0], "attention_mask": batch[1], "labels": batch[3]}
            outputs = model(**inputs)
            loss = outputs[0]
            if args.gradient_accumulation_steps > 1:
                loss = loss / args.gradient_accumulation_steps
            loss.backward()
            tr_loss += loss  # expect: TL008
            if (step + 1) % args.gradient_accumulation_steps == 0 or step + 1 == len(train_dataloader):
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                optimizer.step()
                scheduler.step()
                model.zero_grad()
                global_step += 1
                if args.logging_steps > 0 and global_step % args.logging_steps == 0:
                    print((tr_loss - logging_loss) / args.logging_steps)
                    logging_loss = tr_loss
    return global_step, tr_loss / global_step
