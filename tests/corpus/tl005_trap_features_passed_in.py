"""Two heads trained on features the caller passes in: separate head forwards, but the features may carry the
caller's encoder graph, which the second backward goes through again."""
import torch.nn.functional as F


def update_heads(features, labels, boxes, cls_head, box_head, cls_opt, box_opt, steps):
    for _ in range(steps):
        cls_loss = F.cross_entropy(cls_head(features), labels)
        cls_opt.zero_grad()
        cls_loss.backward(retain_graph=True)
        cls_opt.step()
        box_loss = F.smooth_l1_loss(box_head(features), boxes)
        box_opt.zero_grad()
        box_loss.backward()
        box_opt.step()
