"""NGCF-style epoch: a fixed number of steps, each sampling a fresh batch of users and items, the losses summed
into totals that are set together once per epoch: every step's graph is kept until the epoch ends."""
import torch


def bpr_loss(users, positives, negatives):
    scores = (users * positives).sum(1) - (users * negatives).sum(1)
    return -torch.nn.functional.logsigmoid(scores).mean()


def train(model, optimizer, sampler, epochs, batches_per_epoch):
    for epoch in range(epochs):
        loss, steps = 0.0, 0
        for idx in range(batches_per_epoch):
            users, positives, negatives = sampler.sample()
            batch_loss = bpr_loss(model(users), model(positives), model(negatives))
            optimizer.zero_grad()
            batch_loss.backward()
            optimizer.step()
            loss += batch_loss  # expect: TL008
            steps += 1
        print(f"epoch {epoch}: {loss / steps:.4f}")
