"""AMP accumulation with the reset inside the step's block, after the scaler steps."""
import torch
from torch.cuda.amp import GradScaler, autocast


def train(model, loader, criterion, epochs, accum_steps=4, lr=1e-3):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    scaler = GradScaler()
    for epoch in range(epochs):
        model.train()
        for batch_idx, (inputs, labels) in enumerate(loader):
            with autocast():
                outputs = model(inputs)
                loss = criterion(outputs, labels) / accum_steps
            scaler.scale(loss).backward()
            if (batch_idx + 1) % accum_steps == 0 or batch_idx + 1 == len(loader):
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad(set_to_none=True)
