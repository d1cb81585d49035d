"""The loss is multiplied by a precomputed `1 / accum` factor."""
import torch.nn.functional as F


def train(args, model, loader, optimizer):
    loss_scale = 1.0 / args.gradient_accumulation_steps
    for step, batch in enumerate(loader):
        loss = F.cross_entropy(model(batch["input"]), batch["label"]) * loss_scale
        loss.backward()
        if (step + 1) % args.gradient_accumulation_steps == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
