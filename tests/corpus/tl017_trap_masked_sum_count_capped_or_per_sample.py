"""A masked token sum divided by something that is not the micro-batch's token count kept from zero: a count
capped from above by the run's setting (`torch.clamp(n, max=cap)`: the same divisor once batches are long
enough), the larger of the count and the batch size (`torch.max(n, x.size(0))`), and the maximum along a
dimension (`torch.max(counts, dim=0)`, a reduction, not a floor). What these average is not shown to be a
token mean, so nothing is reported."""
import torch
import torch.nn.functional as F


def train(args, model, loader, optimizer):
    for step, (tokens, targets, mask) in enumerate(loader):
        losses = F.cross_entropy(model(tokens).flatten(0, 1), targets.flatten(), reduction="none")
        capped = (losses * mask.flatten()).sum() / torch.clamp(mask.sum(), max=args.cap)
        per_batch = (losses * mask.flatten()).sum() / torch.max(mask.sum(), tokens.size(0))
        longest = (losses * mask.flatten()).sum() / torch.max(mask.sum(1), dim=0).values
        loss = (capped + per_batch + longest) / args.accum
        loss.backward()
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
