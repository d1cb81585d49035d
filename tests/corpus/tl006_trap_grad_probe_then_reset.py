"""Measures the auxiliary loss's gradient norm, clears it, then backpropagates the real loss."""
import torch
import torch.nn.functional as F


def grad_norm(parameters):
    norms = [p.grad.norm() for p in parameters if p.grad is not None]
    return torch.stack(norms).norm().item() if norms else 0.0


def train(model, loader, optimizer, aux_weight=0.1, log=print):
    for step, (x, y) in enumerate(loader):
        features = model.encoder(x)
        main_loss = F.cross_entropy(model.head(features), y)
        aux_loss = F.mse_loss(model.decoder(features), x)
        aux_loss.backward(retain_graph=True)
        aux_norm = grad_norm(model.parameters())
        optimizer.zero_grad()
        (main_loss + aux_weight * aux_loss).backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % 50 == 0:
            log({"aux_grad_norm": aux_norm, "loss": main_loss.item()})
