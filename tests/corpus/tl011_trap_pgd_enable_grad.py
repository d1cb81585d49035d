"""Adversarial examples under a no_grad decorator, with gradients re-enabled for the attack's backward."""
import torch
import torch.nn.functional as F


@torch.no_grad()
def pgd_attack(model, x, y, eps=8 / 255, alpha=2 / 255, steps=10):
    delta = torch.empty_like(x).uniform_(-eps, eps)
    for _ in range(steps):
        delta.requires_grad_(True)
        with torch.enable_grad():
            loss = F.cross_entropy(model(x + delta), y)
            loss.backward()
        delta = (delta + alpha * delta.grad.sign()).clamp(-eps, eps).detach()
    return (x + delta).clamp(0, 1)


def adversarial_train(model, loader, optimizer):
    for x, y in loader:
        model.eval()
        x_adv = pgd_attack(model, x, y)
        model.train()
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x_adv), y)
        loss.backward()
        optimizer.step()
