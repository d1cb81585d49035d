"""A module-level training function decorated with `inference_mode` imported under another name."""
from torch import inference_mode as fast_mode
from torch import nn, optim


@fast_mode()
def train_epoch(model, loader, lr=0.01):
    criterion = nn.BCEWithLogitsLoss()
    optimizer = optim.SGD(model.parameters(), lr=lr)
    for features, targets in loader:
        optimizer.zero_grad()
        loss = criterion(model(features).squeeze(-1), targets.float())
        loss.backward()  # expect: TL011
        optimizer.step()
