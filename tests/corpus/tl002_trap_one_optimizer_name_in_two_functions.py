"""Two training functions of one file each bind `optimizer`, over different modules; each loop resets the
module its own optimizer holds."""
import torch.nn.functional as F
import torch.optim as optim


def pretrain_backbone(backbone, loader, epochs):
    optimizer = optim.Adam(backbone.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for x, _ in loader:
            backbone.zero_grad()
            loss = F.mse_loss(backbone.reconstruct(x), x)
            loss.backward()
            optimizer.step()


def train_head(backbone, head, loader, epochs):
    optimizer = optim.SGD(head.parameters(), lr=1e-2, momentum=0.9)
    for epoch in range(epochs):
        for x, y in loader:
            head.zero_grad()
            loss = F.cross_entropy(head(backbone(x).detach()), y)
            loss.backward()
            optimizer.step()
