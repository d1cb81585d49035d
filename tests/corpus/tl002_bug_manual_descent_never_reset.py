"""Gradient descent by hand on a tensor of parameters (a course notebook's quadratic fit): `abc.grad` is never
reset, so every update applies the sum of all the gradients so far."""
import torch

x = torch.linspace(-2, 2, steps=20)[:, None]
y = 3 * x ** 2 + 2 * x + 1
abc = torch.tensor([1.1, 1.1, 1.1]).requires_grad_()


def quad_mse(params):
    a, b, c = params
    return ((a * x ** 2 + b * x + c - y) ** 2).mean()


for i in range(10):
    loss = quad_mse(abc)
    loss.backward()
    with torch.no_grad(): abc -= abc.grad * 0.01  # expect: TL002
    print(f"step={i}; loss={loss:.2f}")
