"""Full-batch L-BFGS: the closure resets, evaluates and backpropagates."""
import torch
from torch import nn, optim


def fit(model, x_train, y_train, epochs=15):
    criterion = nn.MSELoss()
    optimizer = optim.LBFGS(model.parameters(), lr=0.8, history_size=50)
    for epoch in range(epochs):
        def closure():
            optimizer.zero_grad()
            out = model(x_train)
            loss = criterion(out, y_train)
            loss.backward()
            return loss

        loss = optimizer.step(closure)
        print(f"epoch {epoch} loss {loss.item():.6f}")
    with torch.no_grad():
        return criterion(model(x_train), y_train).item()
