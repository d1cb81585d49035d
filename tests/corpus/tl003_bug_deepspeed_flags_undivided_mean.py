"""A trainer that registers DeepSpeed's flags on its parser but backpropagates through the raw optimizer."""
import argparse

import deepspeed
import torch
from torch import nn


def train():
    parser = argparse.ArgumentParser(description="classifier")
    parser.add_argument("--accum_steps", type=int, default=8)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    data = torch.utils.data.TensorDataset(torch.randn(256, 32), torch.randint(0, 10, (256,)))
    loader = torch.utils.data.DataLoader(data, batch_size=16, shuffle=True)
    for epoch in range(10):
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()  # expect: TL003
            if (i + 1) % args.accum_steps == 0 or (i + 1) == len(loader):
                optimizer.step()
                optimizer.zero_grad()
