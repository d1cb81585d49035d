"""An optimizer that runs the backward of the loss it is handed (apex's `FP16_Optimizer(...)`) still leaves the
gradients to be cleared: here nothing does, before or after its step."""
import torch
from apex.fp16_utils import FP16_Optimizer


def train(model, loader, lr):
    optimizer = FP16_Optimizer(torch.optim.SGD(model.parameters(), lr=lr), dynamic_loss_scale=True)
    model.zero_grad()
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.backward(loss)
        optimizer.step()  # expect: TL002
