"""A recurrent-memory model whose memories are the layers' own outputs, appended to a list as they are:
they carry the segment's graph into the next segment."""
import torch
from torch import nn
import torch.nn.functional as F


class MemoryTransformer(nn.Module):
    def __init__(self, num_tokens, dim, depth):
        super().__init__()
        self.emb = nn.Embedding(num_tokens, dim)
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])
        self.to_logits = nn.Linear(dim, num_tokens)

    def forward(self, x, labels, memories=None):
        memories = memories if memories is not None else [None] * len(self.layers)
        x = self.emb(x)
        new_memories = []
        for layer, memory in zip(self.layers, memories):
            if memory is not None:
                x = x + memory.mean(dim=1, keepdim=True)
            x = torch.relu(layer(x))
            new_memories.append(x)
        loss = F.cross_entropy(self.to_logits(x).transpose(1, 2), labels)
        return loss, new_memories
