"""A micro-batch count set back to 0 at each step over a loader of 8 batches (64 samples, batches of 8) with a
window of 4: every epoch ends on a step."""
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def main():
    model = torch.nn.Linear(8, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,))), batch_size=8)
    micro = 0
    for epoch in range(5):
        for step, (x, y) in enumerate(loader):
            (F.cross_entropy(model(x), y) / 4).backward()
            micro += 1
            if micro >= 4:
                optimizer.step()
                optimizer.zero_grad()
                micro = 0


if __name__ == "__main__":
    main()
