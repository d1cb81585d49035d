"""Accepts DeepSpeed's command-line flags but trains with a plain optimizer: the window is the loop's, not the engine's."""
import argparse

import deepspeed
import torch
import torch.nn.functional as F


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=4)
    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()
    model = torch.nn.Linear(16, 4)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(100, 16), torch.randint(0, 4, (100,))), batch_size=8)
    for epoch in range(args.epochs):
        for i, (x, y) in enumerate(loader):
            loss = F.cross_entropy(model(x), y)
            loss.backward()  # expect: TL003
            if (i + 1) % args.gradient_accumulation_steps == 0:  # expect: TL010
                optimizer.step()
                optimizer.zero_grad()


if __name__ == "__main__":
    main()
