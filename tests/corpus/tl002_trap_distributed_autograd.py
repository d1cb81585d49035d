"""Distributed autograd: gradients live in each iteration's context, the DistributedOptimizer steps with it."""
import torch.distributed.autograd as dist_autograd
from torch.distributed.optim import DistributedOptimizer
from torch import optim


def run_trainer(model, remote_params, batches, criterion):
    opt = DistributedOptimizer(optim.SGD, remote_params, lr=0.05)
    for inputs, labels in batches:
        with dist_autograd.context() as context_id:
            loss = criterion(model(inputs), labels)
            dist_autograd.backward(context_id, [loss])
            opt.step(context_id)
