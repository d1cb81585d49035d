"""Style transfer: the target features come back from a helper of the file that runs the network on them, so they may carry a graph; keep retain_graph."""
import torch
import torch.nn.functional as F


def targets_of(extractor, style, content):
    style_features = extractor(style)
    content_features = extractor(content)
    return style_features, content_features


def transfer(extractor, image, style, content, steps=300):
    style_features, content_features = targets_of(extractor, style, content)
    image.requires_grad_(True)
    optimizer = torch.optim.Adam([image], lr=0.01)
    for step in range(steps):
        optimizer.zero_grad()
        features = extractor(image)
        loss = F.mse_loss(features, style_features) + F.mse_loss(features, content_features)
        loss.backward(retain_graph=True)
        optimizer.step()
    return image
