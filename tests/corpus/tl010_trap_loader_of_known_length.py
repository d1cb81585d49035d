"""96 samples in batches of 8 make 12 micro-batches: windows of 4 close on the last one."""
import torch
from torch.utils.data import DataLoader, TensorDataset

ACCUM = 4


def main():
    torch.manual_seed(0)
    dataset = TensorDataset(torch.randn(96, 10), torch.randn(96, 1))
    loader = DataLoader(dataset, batch_size=8, shuffle=True)
    model = torch.nn.Linear(10, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(5):
        for i, (x, y) in enumerate(loader):
            loss = torch.nn.functional.mse_loss(model(x), y) / ACCUM
            loss.backward()
            if (i + 1) % ACCUM == 0:
                optimizer.step()
                optimizer.zero_grad()


if __name__ == "__main__":
    main()
