"""DeepSpeed training driven by its command-line flags: the engine divides the loss, accumulates and steps."""
import argparse

import deepspeed
import torch
import torch.nn.functional as F


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--local_rank", type=int, default=-1)
    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()
    model = torch.nn.Linear(16, 4)
    dataset = torch.utils.data.TensorDataset(torch.randn(100, 16), torch.randint(0, 4, (100,)))
    model_engine, optimizer, loader, _ = deepspeed.initialize(
        args=args, model=model, model_parameters=model.parameters(), training_data=dataset
    )
    gradient_accumulation_steps = model_engine.gradient_accumulation_steps()
    for epoch in range(args.epochs):
        for i, (x, y) in enumerate(loader):
            x, y = x.to(model_engine.device), y.to(model_engine.device)
            loss = F.cross_entropy(model_engine(x), y)
            model_engine.backward(loss)
            model_engine.step()
            if (i + 1) % gradient_accumulation_steps == 0 and model_engine.global_rank == 0:
                print(f"epoch {epoch} step {(i + 1) // gradient_accumulation_steps}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
