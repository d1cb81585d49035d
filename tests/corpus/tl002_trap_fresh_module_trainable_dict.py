"""Each case builds a new module and one SGD over its trainable parameters (picked by a dict comprehension):
one backward, one step, and the next case starts from new parameters with no gradient."""
import itertools
from copy import deepcopy

import torch
from torch import nn


def test_trainable_params_update(sizes, batch_sizes):
    for (d_in, d_out), batch_size in itertools.product(sizes, batch_sizes):
        layer = nn.Linear(d_in, d_out)
        trainable = {name: p for name, p in layer.named_parameters() if p.requires_grad}
        before = deepcopy(trainable)
        pretend_loss = layer(torch.randn(batch_size, d_in)).sum()
        pretend_loss.backward()
        dummy_optim = torch.optim.SGD(trainable.values(), 1)
        dummy_optim.step()
        for name in before:
            assert trainable[name].ne(before[name]).any()
