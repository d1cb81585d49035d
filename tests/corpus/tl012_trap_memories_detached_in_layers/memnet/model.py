"""A transformer whose attention layers hand back their keys and values as the next segment's memories,
detached inside each layer: the memories the model returns carry no graph."""
import torch
from torch import nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, dim, max_memories):
        super().__init__()
        self.qkv = nn.Linear(dim, dim * 3)
        self.out = nn.Linear(dim, dim)
        self.max_memories = max_memories

    def forward(self, x, memory=None):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        if memory is not None:
            k = torch.cat((memory[..., 0, :], k), dim=1)
            v = torch.cat((memory[..., 1, :], v), dim=1)
        attn = (q @ k.transpose(-1, -2)).softmax(dim=-1)
        new_memory = torch.stack((k, v), dim=-2).detach()
        return self.out(attn @ v), new_memory[:, -self.max_memories:]


class MemoryTransformer(nn.Module):
    def __init__(self, num_tokens, dim, depth, max_memories):
        super().__init__()
        self.emb = nn.Embedding(num_tokens, dim)
        self.layers = nn.ModuleList([Attention(dim, max_memories) for _ in range(depth)])
        self.to_logits = nn.Linear(dim, num_tokens)

    def forward(self, x, labels, memories=None):
        memories = memories if memories is not None else [None] * len(self.layers)
        x = self.emb(x)
        new_memories = []
        for layer, memory in zip(self.layers, memories):
            x, new_memory = layer(x, memory=memory)
            new_memories.append(new_memory)
        loss = F.cross_entropy(self.to_logits(x).transpose(1, 2), labels)
        return loss, new_memories
