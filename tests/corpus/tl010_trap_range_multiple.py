"""The number of micro-batches is built as a multiple of the accumulation count."""
import torch
import torch.nn.functional as F


def train(model, sample_batch, args):
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    total_micro_steps = args.max_updates * args.gradient_accumulation_steps
    for step in range(args.gradient_accumulation_steps * args.max_updates):
        x, y = sample_batch()
        loss = F.cross_entropy(model(x), y) / args.gradient_accumulation_steps
        loss.backward()
        if (step + 1) % args.gradient_accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
    return total_micro_steps
