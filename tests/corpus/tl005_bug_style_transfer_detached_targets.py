"""Style transfer whose targets are cut from the extractor's graph before the loop (`.detach()`, `torch.no_grad()`): the only backward of each step still retains its graph."""
import torch
import torch.nn.functional as F


def gram(features):
    b, c, h, w = features.shape
    flat = features.view(b, c, h * w)
    return flat @ flat.transpose(1, 2) / (c * h * w)


def transfer(extractor, content, style, steps=300, style_weight=1e6):
    content_target = extractor(content)[-1].detach()
    with torch.no_grad():
        style_targets = [gram(f) for f in extractor(style)]
    image = content.clone().requires_grad_(True)
    optimizer = torch.optim.Adam([image], lr=0.02)
    for step in range(steps):
        optimizer.zero_grad()
        features = extractor(image)
        content_loss = F.mse_loss(features[-1], content_target)
        style_loss = sum(F.mse_loss(gram(f), g) for f, g in zip(features, style_targets))
        loss = content_loss + style_weight * style_loss
        loss.backward(retain_graph=True)  # expect: TL005
        optimizer.step()
    return image.detach()
