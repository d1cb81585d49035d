"""Mixed precision by hand: the low-precision copy's gradients move into the fp32 fp32_model weights, then the
copy's are dropped before the step. The optimizer holds the fp32_model weights, whose gradients stay."""
import copy

import torch
from torch import nn


def train(loader, steps=10):
    fp32_model = nn.Linear(32, 8)
    optimizer = torch.optim.Adam(fp32_model.parameters(), lr=1e-4)
    model_bf16 = copy.deepcopy(fp32_model)
    for p in model_bf16.parameters():
        p.data = p.data.to(torch.bfloat16)
    for inputs in loader:
        optimizer.zero_grad(set_to_none=True)
        loss = model_bf16(inputs.to(torch.bfloat16)).float().sum()
        loss.backward()
        for p_fp32, p_bf16 in zip(fp32_model.parameters(), model_bf16.parameters()):
            p_fp32.grad = p_bf16.grad.to(p_fp32.dtype)
            p_bf16.grad = None
        optimizer.step()
        for p_fp32, p_bf16 in zip(fp32_model.parameters(), model_bf16.parameters()):
            p_bf16.detach().copy_(p_fp32)
