"""Neural style transfer: the content and style targets are computed once, before the loop, by the feature extractor and passed in; each step backpropagates through them again."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def gram(features):
    b, c, h, w = features.shape
    flat = features.view(b, c, h * w)
    return flat @ flat.transpose(1, 2) / (c * h * w)


class Extractor(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = nn.ModuleList(layers)

    def forward(self, x):
        outputs = []
        for layer in self.layers:
            x = layer(x)
            outputs.append(x)
        return outputs


def transfer(extractor, image, content_target, style_targets, steps=300, style_weight=1e6):
    optimizer = torch.optim.Adam([image], lr=0.02)
    for step in range(steps):
        optimizer.zero_grad()
        features = extractor(image)
        content_loss = F.mse_loss(features[-1], content_target)
        style_loss = sum(F.mse_loss(gram(f), g) for f, g in zip(features, style_targets))
        loss = content_loss + style_weight * style_loss
        loss.backward(retain_graph=True)
        optimizer.step()
    return image.detach()


def main(content, style, layers):
    extractor = Extractor(layers)
    content_target = extractor(content)[-1]
    style_targets = [gram(f) for f in extractor(style)]
    image = content.clone().requires_grad_(True)
    return transfer(extractor, image, content_target, style_targets)
