"""PGD adversarial training: the attack loop backpropagates into the perturbation, clearing the model's gradients
each time; the model's own update follows after a reset and a backward of its own."""
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, epsilon=8 / 255, alpha=2 / 255, attack_iters=7):
    for x, y in loader:
        delta = torch.zeros_like(x).uniform_(-epsilon, epsilon).requires_grad_(True)
        for _ in range(attack_iters):
            model.zero_grad()
            loss = F.cross_entropy(model(x + delta), y)
            loss.backward()
            delta.data = (delta + alpha * delta.grad.sign()).clamp(-epsilon, epsilon)
            delta.grad.zero_()
        delta = delta.detach()
        optimizer.zero_grad()
        F.cross_entropy(model(x + delta), y).backward()
        optimizer.step()
