"""The data generator says where each micro-batch sits in its window (`micro % accum_steps`), and the step waits
for the window's last one, but the gradients are reset after every micro-batch: each step sees only the last
micro-batch's gradients."""
import torch
import torch.nn.functional as F


def micro_batches(loader, accum_steps):
    micro = 0
    for inputs, targets in loader:
        yield {"accum_index": micro % accum_steps, "micro_step": micro}, (inputs, targets)
        micro += 1


def train(model, loader, accum_steps=4):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for meta, (inputs, targets) in micro_batches(loader, accum_steps):
        loss = F.cross_entropy(model(inputs), targets) / accum_steps
        loss.backward()
        if meta["accum_index"] == accum_steps - 1:
            optimizer.step()
        optimizer.zero_grad()  # expect: TL007
