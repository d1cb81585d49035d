"""A meta-learning step from another package returns the adapted model with its loss; the optimizer is
built over that model's parameters: `model` is a module, whose parameters carry no graph of their own."""
import torch

from metalib import adapt


def meta_train(model, tasks, meta_lr, inner_steps):
    meta_optimizer = torch.optim.Adam(model.parameters(), lr=meta_lr)
    for support, query in tasks:
        meta_optimizer.zero_grad()
        model, query_loss = adapt(model, support, query, steps=inner_steps)
        query_loss.backward()
        meta_optimizer.step()
