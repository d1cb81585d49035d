"""DGL line-graph style: a decorated step function backpropagates a loss it builds from chunks (a sum of
generator expressions, whose criterion the code does not name) and hands that very tensor back; the epoch loop
adds it to a total. The loss was backpropagated, so it is attached to a graph, and every step's graph is kept
until the epoch ends. The `loss` the module computes from the total afterwards is not the step's own `loss`."""
import numpy as np
import torch
import torch.nn.functional as F

model = torch.nn.Linear(8, 2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
labelings = [torch.zeros(4, dtype=torch.long), torch.ones(4, dtype=torch.long)]


def from_np(f, *args):
    def wrap(*args):
        new = [torch.from_numpy(x) if isinstance(x, np.ndarray) else x for x in args]
        return f(*new)

    return wrap


@from_np
def step(features, batch_size):
    z_list = torch.chunk(model(features), batch_size, 0)
    loss = sum(min(F.cross_entropy(z, y) for y in labelings) for z in z_list) / batch_size
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss, len(z_list)


for epoch in range(10):
    total_loss, seen = 0, 0
    for j, [features] in enumerate(loader):
        loss, chunks = step(features, 2)
        total_loss += loss  # expect: TL008
        seen += chunks
    loss = total_loss / (j + 1)
    print("epoch %d loss %.3f" % (epoch, loss))


def train(net, opt, batches):
    def one_step(batch):
        out = net(batch)
        loss = out.pow(2).mean() + sum(p.abs().sum() for p in net.parameters())
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    running = 0.0
    for batch in batches:
        loss = one_step(batch)
        running = running + loss  # expect: TL008
    return float(running)
