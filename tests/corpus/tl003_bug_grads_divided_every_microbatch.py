"""The gradients are divided by the accumulation count after every backward, not once per window: the
gradients the window's first micro-batches left are divided again with each later one."""
import torch.nn.functional as F


def train(model, loader, optimizer, accum_steps=4):
    for i, (images, labels) in enumerate(loader):
        loss = F.cross_entropy(model(images), labels)
        loss.backward()  # expect: TL003
        for p in model.parameters():
            p.grad.div_(accum_steps)
        if (i + 1) % accum_steps == 0 or i + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
