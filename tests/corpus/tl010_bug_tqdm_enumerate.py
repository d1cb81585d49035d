"""Progress bar around `enumerate`; the step condition ignores the epoch's last batches."""
import torch
from tqdm import tqdm


def train_epoch(model, loader, optimizer, scheduler, args):
    model.train()
    pbar = tqdm(enumerate(loader), total=len(loader), desc="train")
    for i, batch in pbar:
        input_ids, labels = batch["input_ids"].cuda(), batch["labels"].cuda()
        loss = model(input_ids=input_ids, labels=labels).loss
        loss = loss / args.grad_accum
        loss.backward()
        if (i + 1) % args.grad_accum == 0:  # expect: TL010
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
        pbar.set_postfix(loss=loss.item() * args.grad_accum)
