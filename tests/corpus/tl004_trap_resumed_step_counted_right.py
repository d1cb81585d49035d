"""A fine-tuning loop that resumes its step count from a checkpoint and steps at the end of each window."""
import torch
import torch.nn.functional as F


def train(model, loader, args):
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    global_step = 0
    if args.resume_from:
        state = torch.load(args.resume_from, map_location="cpu")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        global_step = state["global_step"]
    for epoch in range(args.epochs):
        for batch in loader:
            logits = model(batch["input_ids"])
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), batch["labels"].view(-1))
            (loss / args.accum_steps).backward()
            if (global_step + 1) % args.accum_steps == 0 or (global_step + 1) % len(loader) == 0:
                optimizer.step()
                optimizer.zero_grad()
            global_step += 1
