"""Character-level RNN trained with a loss summed over the time steps of each chunk."""
import torch
import torch.nn.functional as F


def train(model, batches, optimizer, seq_len=35, clip=0.25):
    hidden = model.init_hidden(batch_size=32)
    for inputs, targets in batches:
        hidden = hidden.detach()
        optimizer.zero_grad()
        loss = torch.zeros(())
        for t in range(seq_len):
            output, hidden = model.cell(inputs[t], hidden)
            loss = loss + F.cross_entropy(output, targets[t])
            loss.backward(retain_graph=True)  # expect: TL001
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
