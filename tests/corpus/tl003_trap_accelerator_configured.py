"""`Accelerator(gradient_accumulation_steps=N).backward` divides the loss by N itself."""
import torch
from accelerate import Accelerator

GRAD_ACCUM = 4


def train(model, train_dataloader, epochs=3):
    accelerator = Accelerator(gradient_accumulation_steps=GRAD_ACCUM)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    for epoch in range(epochs):
        for step, batch in enumerate(train_dataloader):
            loss = model(**batch).loss
            accelerator.backward(loss)
            if (step + 1) % GRAD_ACCUM == 0 or step + 1 == len(train_dataloader):
                optimizer.step()
                optimizer.zero_grad()
