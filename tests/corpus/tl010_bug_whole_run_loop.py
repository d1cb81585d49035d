"""A single-pass fine-tuning script: one loop over the data is the whole run, with no epoch loop around it."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    model = torch.nn.Linear(32, 2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    criterion = torch.nn.CrossEntropyLoss()
    accumulation_steps = 8
    dataset = TensorDataset(torch.randn(1000, 32), torch.randint(0, 2, (1000,)))
    loader = DataLoader(dataset, batch_size=12, shuffle=True)
    model.train()
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accumulation_steps
        loss.backward()
        if (step + 1) % accumulation_steps == 0:  # expect: TL010
            optimizer.step()
            optimizer.zero_grad()
    torch.save(model.state_dict(), "model.pt")


if __name__ == "__main__":
    main()
