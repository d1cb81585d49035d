"""The total of the losses of the loop is only logged: the losses differentiated after the loop are others."""
import torch.nn.functional as F
from torch import autograd


def probe(network, optimizer, minibatches, log):
    total_loss = 0
    for x, y in minibatches:
        env_loss = F.cross_entropy(network(x), y)
        total_loss += env_loss  # expect: TL008
        autograd.grad(env_loss, network.parameters(), create_graph=True)
    final = F.cross_entropy(network(minibatches[0][0]), minibatches[0][1])
    optimizer.zero_grad()
    final.backward()
    optimizer.step()
    log(total_loss.detach())
