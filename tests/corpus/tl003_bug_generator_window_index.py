"""The micro-batch's place in its window comes from the data iterator: a generator of this file yields a dict
whose `grad_accum_index` is `curr_micro_step % grad_accum_steps`, and the loop steps when it is the last one.
The mean loss is never divided by `args.grad_accum_steps`."""
import math

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader


def train(args, model, dataset):
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    train_iterator = get_train_iterator(
        dataset,
        batch_size=args.batch_size,
        total_steps=args.total_steps,
        grad_accum_steps=args.grad_accum_steps,
    )
    losses = []
    optimizer.zero_grad()
    for batch_metadata, batch in train_iterator:
        output = model(input_ids=batch["input_ids"].cuda())
        loss = F.cross_entropy(output.view(-1, output.size(-1)), batch["labels"].view(-1).cuda())
        loss.backward()  # expect: TL003
        if batch_metadata["grad_accum_index"] == args.grad_accum_steps - 1:
            optimizer.step()
            optimizer.zero_grad()
            losses.append(loss.item())
            print(batch_metadata["curr_step"], loss.item())
    return losses


def get_train_iterator(dataset, batch_size, total_steps, start_step=0, grad_accum_steps=1):
    total_micro_steps = total_steps * grad_accum_steps
    start_micro_step = start_step * grad_accum_steps
    data_loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, drop_last=True)
    curr_micro_step = 0
    for epoch in range(math.ceil(total_micro_steps / len(data_loader))):
        for micro_batch in data_loader:
            metadata = {
                "curr_micro_step": curr_micro_step,
                "curr_step": curr_micro_step // grad_accum_steps,
                "grad_accum_index": curr_micro_step % grad_accum_steps,
            }
            if curr_micro_step >= start_micro_step:
                yield metadata, micro_batch
            curr_micro_step += 1
            if curr_micro_step == total_micro_steps:
                return
