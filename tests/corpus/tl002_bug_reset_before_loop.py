"""Regression model; the gradients are cleared once, before training starts."""
from torch import nn, optim
from tqdm import tqdm


def fit(model, loader, epochs, lr=1e-3, log_every=50):
    criterion = nn.MSELoss()
    optimizer = optim.Adam(model.parameters(), lr=lr)
    optimizer.zero_grad()
    for epoch in range(epochs):
        for i, (x, y) in tqdm(enumerate(loader), total=len(loader)):
            pred = model(x)
            loss = criterion(pred, y)
            loss.backward()
            optimizer.step()  # expect: TL002
            if i % log_every == 0:
                print(f"epoch {epoch} step {i} loss {loss.item():.4f}")
