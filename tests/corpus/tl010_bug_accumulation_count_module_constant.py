"""The same script with a module constant of 4: the last window of each epoch is never stepped."""
import torch
import torch.nn.functional as F

gradient_accumulation_steps = 4


def train_epoch(epoch, model, optimizer, train_loader):
    for step, (X, Y) in enumerate(train_loader):
        logits = model(X)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), Y.view(-1)) / gradient_accumulation_steps
        loss.backward()
        if (step + 1) % gradient_accumulation_steps == 0:  # expect: TL010
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
