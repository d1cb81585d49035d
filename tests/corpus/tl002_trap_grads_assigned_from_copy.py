"""Gradients computed on a copy of the network, then assigned to the optimized network's parameters before each
step: every `.grad` the optimizer reads is replaced, nothing accumulates."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


def train(net: nn.Module, samples, epochs: int) -> None:
    tgt_net = copy.deepcopy(net)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
    for _ in range(epochs):
        for x, y in samples:
            tgt_net.load_state_dict(net.state_dict())
            tgt_net.zero_grad()
            loss = F.mse_loss(tgt_net(x), y)
            loss.backward()
            grads = [p.grad.detach().cpu().numpy() for p in tgt_net.parameters()]
            for grad, param in zip(grads, net.parameters()):
                param.grad = torch.from_numpy(grad)
            optimizer.step()
