"""Truncated BPTT: the loss is summed over `k` time steps, backpropagated once, then reset."""
import torch.nn.functional as F


def train_sequence(model, optimizer, inputs, targets, k=20):
    hidden = model.init_hidden(inputs.size(1))
    loss = 0
    seq_len = inputs.size(0)
    for t in range(seq_len):
        output, hidden = model(inputs[t], hidden)
        loss = loss + F.cross_entropy(output, targets[t]) / k
        if (t + 1) % k == 0 or (t + 1) == seq_len:
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            hidden = hidden.detach()
            loss = 0
