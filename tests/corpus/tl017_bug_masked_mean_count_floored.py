"""A masked mean whose token count is kept from zero by a constant floor (`torch.max(count,
torch.tensor(1))`, `torch.clamp(count, min=1)`, `max(count, 1)`): still a mean over the micro-batch's own
masked tokens, so dividing it by the accumulation count weighs the tokens of short micro-batches more."""
import torch
import torch.nn.functional as F


def train_pattern_mlm(args, model, loader, optimizer, device):
    for step, (input_ids, masked_ids, targets) in enumerate(loader):
        full_loss = F.binary_cross_entropy_with_logits(model(masked_ids), targets, reduction="none")
        mask_loss = input_ids != masked_ids
        loss = torch.sum(full_loss * mask_loss.float()) / torch.max(torch.sum(mask_loss),
                                                                    torch.tensor(1).to(device))
        loss = loss / args.accum  # expect: TL017
        loss.backward()
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def train_clamped(args, model, loader, optimizer):
    for step, (tokens, targets, mask) in enumerate(loader):
        losses = F.cross_entropy(model(tokens).flatten(0, 1), targets.flatten(), reduction="none")
        n_tokens = torch.clamp(mask.sum(), min=1)
        loss = (losses * mask.flatten()).sum() / n_tokens
        (loss / args.accum).backward()  # expect: TL017
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def train_builtin_max(args, model, loader, optimizer):
    for step, (tokens, targets, mask) in enumerate(loader):
        losses = F.cross_entropy(model(tokens).flatten(0, 1), targets.flatten(), reduction="none")
        loss = (losses * mask.flatten()).sum() / max(mask.sum(), 1)
        loss = loss / args.accum  # expect: TL017
        loss.backward()
        if (step + 1) % args.accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
