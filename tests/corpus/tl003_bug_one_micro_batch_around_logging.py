"""A window of one micro-batch around the logging branch that holds the step (indented one level too
deep): the step runs once every `log_every` micro-batches, whose mean losses are summed, and the
clipping runs on each partial sum."""
import torch


def train(model, loader, optimizer, log_every=50):
    accumulation = 1
    micro, updates = 0, 0
    for epoch in range(10):
        for batch in loader:
            loss = model(batch)
            loss.backward()  # expect: TL003
            micro += 1
            if micro % accumulation == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: TL014
                updates += 1
                if updates % log_every == 0:
                    print("loss", loss.item())
                    optimizer.step()
                    optimizer.zero_grad()
