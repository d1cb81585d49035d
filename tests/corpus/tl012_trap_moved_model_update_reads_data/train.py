"""The embeddings fed back each iteration come from `model.update_embeds`, which reads the model only through
`.data`: no graph crosses iterations. The model is built with `.to(device)` and passed in."""
import torch
import torch.nn.functional as F

from smoothing.model import Smoother


def train(model, embeds, adjacency, labels, lr: float = 0.5):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(64):
        model.train()
        output = model(embeds)
        loss = F.mse_loss(output, labels, reduction="sum")
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        embeds = model.update_embeds(embeds, adjacency, labels, 0.01)
    return embeds


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    features = torch.randn(32, 8, device=device)
    adjacency = torch.eye(32, device=device).to_sparse()
    labels = F.one_hot(torch.randint(0, 3, (32,)), 3).float().to(device)
    model = Smoother(8, 3).to(device)
    train(model, features, adjacency, labels)
