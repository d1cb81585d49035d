"""One epoch of the trainer package: the loss comes from a function of the package's losses module."""
from .losses import lm_loss


def train_one_epoch(model, loader, optimizer, accum_iter):
    optimizer.zero_grad()
    for step, (tokens, labels) in enumerate(loader):
        loss = lm_loss(model(tokens), labels)
        loss.backward()  # expect: TL003
        if (step + 1) % accum_iter == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
