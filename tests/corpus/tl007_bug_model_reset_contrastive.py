"""Contrastive pre-training with accumulation; `model.zero_grad()` runs on every micro-batch."""
import torch
import torch.nn.functional as F


def info_nce(z1, z2, temperature=0.1):
    z1, z2 = F.normalize(z1, dim=1), F.normalize(z2, dim=1)
    logits = z1 @ z2.t() / temperature
    labels = torch.arange(z1.size(0), device=z1.device)
    return F.cross_entropy(logits, labels)


def pretrain(model, loader, accum=4, epochs=100):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    for epoch in range(epochs):
        for i, (view1, view2) in enumerate(loader):
            model.zero_grad()  # expect: TL007
            loss = info_nce(model(view1), model(view2)) / accum
            loss.backward()
            if (i + 1) % accum == 0:
                optimizer.step()
        optimizer.step()
        optimizer.zero_grad()
