"""The micro-batch losses are summed into a running loss that is backpropagated after each micro-batch."""
import torch.nn.functional as F


def train(model, optimizer, batches, steps, accum):
    for step in range(steps):
        loss = 0.0
        for _ in range(accum):
            x, y = next(batches)
            loss = loss + F.mse_loss(model(x), y)
            loss.backward()  # expect: TL001
        optimizer.step()
        optimizer.zero_grad()
        print(step, loss.item())
