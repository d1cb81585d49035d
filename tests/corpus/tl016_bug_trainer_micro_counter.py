"""A trainer holding its DDP model in `self.model`, with a micro-batch counter."""
import torch
from torch.nn.parallel import DistributedDataParallel


class Trainer:
    def __init__(self, model, loader, rank, grad_accum):
        self.model = DistributedDataParallel(model.to(rank), device_ids=[rank], find_unused_parameters=False)
        self.loader = loader
        self.grad_accum = grad_accum
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-4)

    def fit(self, max_micro_batches):
        micro = 0
        batches = iter(self.loader)
        for _ in range(max_micro_batches):
            batch = next(batches)
            out = self.model(**batch)  # expect: TL016
            (out.loss / self.grad_accum).backward()
            micro += 1
            if micro == self.grad_accum:  # expect: TL010
                self.optimizer.step()
                self.optimizer.zero_grad(set_to_none=True)
                micro = 0
