"""The embeddings fed back each iteration come from the encoder's forward in `model.update_embeds`: the next
backward reaches into the previous iteration's graph. The model is built with `.cuda()`/`.to()` and passed in."""
import torch
import torch.nn.functional as F

from smoothing.model import Refiner


def train(model, embeds, labels, lr: float = 0.1):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(16):
        output = model(embeds)
        loss = F.cross_entropy(output, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        embeds = model.update_embeds(embeds, 0.01)  # expect: TL012
    return embeds


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Refiner(8, 3).to(device).train()
    train(model, torch.randn(32, 8, device=device), torch.randint(0, 3, (32,), device=device))
