"""Deep supervision: the network returns one prediction per stage and every stage is scored.

Carries TL001: the summed loss is backpropagated inside the loop that sums it.
"""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class StagedNet(nn.Module):
    def __init__(self, width: int = 64, stages: int = 4) -> None:
        super().__init__()
        self.stem = nn.Linear(32, width)
        self.stages = nn.ModuleList(nn.Linear(width, width) for _ in range(stages))
        self.heads = nn.ModuleList(nn.Linear(width, 10) for _ in range(stages))

    def forward(self, x):
        h = torch.relu(self.stem(x))
        outputs = []
        for stage, head in zip(self.stages, self.heads):
            h = torch.relu(stage(h))
            outputs.append(head(h))
        return outputs


def train_epoch(model: StagedNet, loader: DataLoader, optimizer, criterion, device: str) -> float:
    model.train()
    seen = 0.0
    for images, target_var in loader:
        images, target_var = images.to(device), target_var.to(device)
        output = model(images)
        optimizer.zero_grad()
        loss = 0
        for j in range(len(output)):
            loss += criterion(output[j], target_var)
            loss.backward()
        optimizer.step()
        seen += float(loss)
    return seen / len(loader)


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = StagedNet().to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    data = torch.utils.data.TensorDataset(torch.randn(512, 32), torch.randint(0, 10, (512,)))
    loader = DataLoader(data, batch_size=32, shuffle=True)
    for epoch in range(3):
        print(epoch, train_epoch(model, loader, optimizer, criterion, device))


if __name__ == "__main__":
    main()
