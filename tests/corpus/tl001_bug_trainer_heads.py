"""Multi-task trainer: one shared backbone, one head and one loss per task."""
import torch


class MultiTaskTrainer:
    def __init__(self, backbone, heads, loss_fns, weights, lr=3e-4):
        self.model = backbone
        self.heads = heads
        self.loss_fns = loss_fns
        self.weights = weights
        params = list(backbone.parameters()) + [p for h in heads.values() for p in h.parameters()]
        self.optimizer = torch.optim.AdamW(params, lr=lr)

    def train_step(self, batch):
        features = self.model(batch["image"])
        total = torch.zeros((), device=features.device)
        self.optimizer.zero_grad(set_to_none=True)
        for name, head in self.heads.items():
            pred = head(features)
            total = total + self.weights[name] * self.loss_fns[name](pred, batch[name])
            total.backward(retain_graph=True)  # expect: TL001
        self.optimizer.step()
        return total.item()
