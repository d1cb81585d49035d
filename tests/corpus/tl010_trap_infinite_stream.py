"""Step-based training over an endless stream: there is no last micro-batch to lose."""
import itertools

import torch


def train(model, loader, optimizer, max_updates, accum=8):
    updates = 0
    for i, batch in enumerate(itertools.cycle(loader)):
        loss = model(**batch).loss / accum
        loss.backward()
        if (i + 1) % accum == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
            updates += 1
            if updates == max_updates:
                break
