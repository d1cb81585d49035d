"""A token-mean loss with other terms added to it afterwards (`loss += 0.1 * aux`, `total = total +
aux.mean()`): the token mean's part of the gradient is still weighed by micro-batch when the sum is divided
by the accumulation count, whatever the other terms are."""
import torch.nn.functional as F


def train(args, model, loader, optimizer):
    for step, (tokens, targets) in enumerate(loader):
        logits, aux = model(tokens)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-100)
        loss += 0.1 * aux
        loss = loss / args.accum  # expect: TL017
        loss.backward()
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def train_total(args, model, loader, optimizer):
    for step, (tokens, targets) in enumerate(loader):
        logits, aux = model(tokens)
        total = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-100)
        total = total + aux.mean()
        (total / args.accum).backward()  # expect: TL017
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
