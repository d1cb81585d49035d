"""The loop's function is defined in an `except ImportError:` fallback and run by a test with 4, which divides
the 100 micro-batches: a function of the module all the same, whose callers say what it runs with."""
import torch
from torch import nn

try:
    import apex
except ImportError:
    def train_accumulated(model, accumulation_steps):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        inputs, targets = torch.randn(10, 10), torch.randint(0, 2, (10,))
        for batch_idx in range(100):
            loss = nn.functional.cross_entropy(model(inputs), targets) / accumulation_steps
            loss.backward()
            if (batch_idx + 1) % accumulation_steps == 0:
                optimizer.step()
                optimizer.zero_grad()


def test_four():
    train_accumulated(nn.Linear(10, 2), accumulation_steps=4)
