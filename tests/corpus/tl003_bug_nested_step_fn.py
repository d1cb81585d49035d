"""A closure per micro-batch: `micro_step` is defined inside `train` and called by its loop."""
import torch
import torch.nn.functional as F


def train(model, loader, grad_accum=8, lr=3e-4):
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)

    def micro_step(tokens, targets):
        logits = model(tokens)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        loss.backward()  # expect: TL003
        return loss.item()

    losses = []
    for step, (tokens, targets) in enumerate(loader, start=1):
        losses.append(micro_step(tokens, targets))
        if step % grad_accum == 0 or step == len(loader):
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
    return losses
