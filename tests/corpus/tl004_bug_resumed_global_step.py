"""Language-model fine-tuning that can resume: the global step is restored from the checkpoint, but a fresh run counts from 0."""
import torch
import torch.nn.functional as F


def train(model, loader, args):
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    global_step = 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        global_step = checkpoint["step"]
    model.train()
    for epoch in range(args.epochs):
        for batch in loader:
            logits = model(batch["input_ids"])
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), batch["labels"].view(-1))
            (loss / args.accum_steps).backward()
            if global_step % args.accum_steps == 0:  # expect: TL004
                optimizer.step()
                optimizer.zero_grad()
            global_step += 1
