"""A per-epoch micro-batch count over a loader whose length is a known multiple of the window: 64 samples,
batches of 8 with `drop_last=True`, windows of 4: every epoch ends on a step."""
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

ACCUM = 4


def main():
    model = torch.nn.Linear(16, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(TensorDataset(torch.randn(64, 16), torch.randint(0, 3, (64,))), batch_size=8,
                        shuffle=True, drop_last=True)
    for epoch in range(3):
        micro = 0
        for x, y in loader:
            micro += 1
            (F.cross_entropy(model(x), y) / ACCUM).backward()
            if micro % ACCUM == 0:
                optimizer.step()
                optimizer.zero_grad()


if __name__ == "__main__":
    main()
