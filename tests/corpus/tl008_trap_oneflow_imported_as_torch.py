"""A PyTorch example ported to OneFlow by changing one import: `import oneflow as torch` is not PyTorch."""
import oneflow as torch
import oneflow.nn as nn
import oneflow.nn.functional as F
from oneflow.utils.data import DataLoader
from flowvision import datasets, transforms


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


def train(model, device, train_loader, optimizer, epoch, log_interval=100):
    model.train()
    running_loss = 0.0
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.cross_entropy(output, target)
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            running_loss += loss
        if batch_idx % log_interval == 0:
            print(f"epoch {epoch} [{batch_idx * len(data)}/{len(train_loader.dataset)}] loss {float(running_loss) / (batch_idx + 1):.4f}")


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dataset = datasets.MNIST("data", train=True, download=True, transform=transforms.ToTensor())
    train_loader = DataLoader(dataset, batch_size=64, shuffle=True)
    model = Net().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for epoch in range(1, 4):
        train(model, device, train_loader, optimizer, epoch)


if __name__ == "__main__":
    main()
