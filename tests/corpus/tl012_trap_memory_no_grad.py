"""A memory bank updated under no_grad from the model's outputs: it carries no graph."""
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, momentum=0.99, temperature=0.07):
    memory = torch.zeros(4096, model.dim)
    for images, labels in loader:
        features = F.normalize(model(images), dim=1)
        logits = features @ memory.t() / temperature
        loss = F.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            memory = update_memory(memory, features, momentum)


def update_memory(memory, features, momentum):
    return torch.cat([features, memory[: -features.size(0)]]) * momentum
