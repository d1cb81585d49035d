"""The memories handed back are the layers' outputs, never detached: the next segment's backward runs
into the previous segment's freed graph."""
import torch

from memnet import MemoryTransformer

model = MemoryTransformer(num_tokens=256, dim=64, depth=2)
optim = torch.optim.Adam(model.parameters(), lr=1e-3)

for _ in range(100):
    data = torch.randint(0, 256, (4, 4 * 32 + 1))
    seq, labels = data[:, :-1], data[:, 1:]
    memories = None
    for seq_segment, labels_segment in zip(seq.chunk(4, dim=-1), labels.chunk(4, dim=-1)):
        loss, memories = model(seq_segment, labels=labels_segment, memories=memories)  # expect: TL012
        (loss / 4).backward()
    optim.step()
    optim.zero_grad()
