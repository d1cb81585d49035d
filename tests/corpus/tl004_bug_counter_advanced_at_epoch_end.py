"""A plain step counter set before the epochs, advanced after the test on every batch but the last and once
more at the end of each epoch: 0 on the first micro-batch of the run."""
import torch
from torch import nn

model = nn.Linear(8, 2)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
accum_iter = 4


def train(loader, epochs):
    iteration = 0
    for epoch in range(epochs):
        for step, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) / accum_iter
            loss.backward()
            if iteration % accum_iter == 0:  # expect: TL004
                optimizer.step()
                optimizer.zero_grad()
            if step != len(loader) - 1:
                iteration += 1
        print(f"epoch {epoch} done at iteration {iteration}")
        iteration += 1
