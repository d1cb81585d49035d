"""Fine-tuning script: the gradient is clipped after every micro-batch, the optimizer steps once per window."""
import torch
from tqdm import tqdm


def train(args, model, train_dataloader, optimizer, scheduler):
    global_step = 0
    model.zero_grad()
    for epoch in range(int(args.num_train_epochs)):
        for step, batch in enumerate(tqdm(train_dataloader, desc="Iteration")):
            batch = tuple(t.to(args.device) for t in batch)
            inputs = {"input_ids": batch[0], "attention_mask": batch[1], "labels": batch[3]}
            outputs = model(**inputs)
            loss = outputs[0]
            if args.gradient_accumulation_steps > 1:
                loss = loss / args.gradient_accumulation_steps
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)  # expect: TL014
            if (step + 1) % args.gradient_accumulation_steps == 0 or step + 1 == len(train_dataloader):
                optimizer.step()
                scheduler.step()
                model.zero_grad()
                global_step += 1
    return global_step
