"""100 samples in batches of 8 make 13 micro-batches: the 13th is left over from every epoch."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def main(accum=4):
    torch.manual_seed(0)
    features, targets = torch.randn(100, 10), torch.randn(100, 1)
    loader = DataLoader(TensorDataset(features, targets), batch_size=8)
    model = torch.nn.Linear(10, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(5):
        for i, (x, y) in enumerate(loader):
            loss = torch.nn.functional.mse_loss(model(x), y) / accum
            loss.backward()
            if (i + 1) % accum == 0:  # expect: TL010
                optimizer.step()
                optimizer.zero_grad()


if __name__ == "__main__":
    main()
