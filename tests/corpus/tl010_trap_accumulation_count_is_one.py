"""A pre-training script whose accumulation count is a module constant of 1 set under `if __name__ == "__main__":`
(the override from the command line commented out): the step condition holds on every micro-batch."""
import torch
import torch.nn.functional as F


def train_epoch(epoch, model, optimizer, train_loader, scaler, ctx):
    for step, (X, Y) in enumerate(train_loader):
        with ctx:
            logits = model(X)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), Y.view(-1))
        scaler.scale(loss).backward()
        if (step + 1) % gradient_accumulation_steps == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)


if __name__ == "__main__":
    gradient_accumulation_steps = 1  # used to simulate larger batch sizes
    batch_size = 32
    # exec(open('configurator.py').read())
    model = torch.nn.Linear(8, 8)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for epoch in range(1):
        train_epoch(epoch, model, optimizer, [], torch.cuda.amp.GradScaler(), torch.no_grad())
