"""Token-count normalisation whose count runs on across epochs while each epoch starts with
`optimizer.zero_grad()`: the last partial window's gradients are thrown away, yet its tokens still count
in the next window's division."""
import torch


def scale_grads(model, factor):
    for p in model.parameters():
        if p.grad is not None:
            p.grad.mul_(factor)


def train(model, loss_fn, loader, optimizer, epochs=2, accum=4):
    num_tokens = 0
    for epoch in range(epochs):
        optimizer.zero_grad()
        for idx, batch in enumerate(loader):
            tokens = (batch["labels"] != -100).sum()
            num_tokens += tokens
            loss = loss_fn(model(batch["input_ids"]), batch["labels"]) * tokens
            loss.backward()
            if (idx + 1) % accum == 0:  # expect: TL010
                scale_grads(model, 1 / num_tokens)
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                num_tokens = 0
