"""The helper the loop calls after the backward steps the scheduler before the optimizer: PyTorch warns
once and the whole schedule comes one step early."""
import torch
import torch.nn.functional as F


def apply_gradients(optimizer, lr_scheduler):
    lr_scheduler.step()  # expect: TL009
    optimizer.step()
    optimizer.zero_grad()


def train(model, loader, epochs=5):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    lr_scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1000, gamma=0.5)
    for epoch in range(epochs):
        for images, labels in loader:
            loss = F.cross_entropy(model(images), labels)
            loss.backward()
            apply_gradients(optimizer, lr_scheduler)
