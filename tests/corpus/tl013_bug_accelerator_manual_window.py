"""A manual window next to an Accelerator configured for accumulation: `accelerator.backward` already
divides by `GRAD_ACCUM`, so the division inside the call makes it `GRAD_ACCUM ** 2`."""
import torch
from accelerate import Accelerator
from torch import nn

GRAD_ACCUM = 4


def train(model, train_dataloader, epochs=3):
    accelerator = Accelerator(gradient_accumulation_steps=GRAD_ACCUM)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    for epoch in range(epochs):
        for step, (images, targets) in enumerate(train_dataloader):
            loss = criterion(model(images), targets)
            accelerator.backward(loss / GRAD_ACCUM)  # expect: TL013
            if (step + 1) % GRAD_ACCUM == 0 or step + 1 == len(train_dataloader):
                optimizer.step()
                optimizer.zero_grad()
