"""A course notebook's script: PyTorch arrives through fastai's star import only; the quadratic's parameters are
stepped by hand and `params.grad` is never reset."""
from fastai.basics import *

params = tensor([1.1, 1.1, 1.1]).requires_grad_()
for i in range(10):
    loss = quad_mse(params)
    loss.backward()
    with torch.no_grad():
        params -= params.grad * 0.01  # expect: TL002
