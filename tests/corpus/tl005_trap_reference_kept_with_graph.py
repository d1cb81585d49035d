"""The reference style is computed with gradients on, and only from some epoch on: an iteration that skips it
reads the previous iteration's `ref`, whose graph the retained backward kept: the next backward goes through
it again."""
import torch


def train(model, discriminator, loader, d_optimizer, epochs, ref_epoch):
    for epoch in range(epochs):
        for i, (mels, ref_mels) in enumerate(loader):
            if epoch >= ref_epoch and i % 10 == 0:
                ref = model.style_encoder(ref_mels)
            d_optimizer.zero_grad()
            d_loss = discriminator(mels, ref).mean()
            d_loss.backward(retain_graph=True)
            d_optimizer.step()
