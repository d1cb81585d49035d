"""Two heads on one trunk, backpropagated one after the other; only the last frees the graph."""
import torch.nn.functional as F


def train(model, loader, optimizer, aux_weight=0.4):
    for images, labels in loader:
        optimizer.zero_grad()
        main_logits, aux_logits = model(images)
        main_loss = F.cross_entropy(main_logits, labels)
        aux_loss = aux_weight * F.cross_entropy(aux_logits, labels)
        main_loss.backward(retain_graph=True)
        aux_loss.backward()
        optimizer.step()
