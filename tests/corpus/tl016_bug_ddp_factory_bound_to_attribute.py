"""A trainer class keeps the model a factory of the file wraps in DDP (`self.model = build_ddp(...)`) and its
`fit` loop accumulates `grad_accum` micro-batches without `no_sync()`."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def build_ddp(model, local_rank):
    torch.cuda.set_device(local_rank)
    return DistributedDataParallel(model.cuda(), device_ids=[local_rank])


class Trainer:
    def __init__(self, model, loader, args):
        dist.init_process_group(backend="nccl")
        self.model = build_ddp(model, args.local_rank)
        self.loader = loader
        self.grad_accum = args.grad_accum
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=args.lr)

    def fit(self):
        for step, batch in enumerate(self.loader):
            loss = self.model(**batch).loss / self.grad_accum  # expect: TL016
            loss.backward()
            if (step + 1) % self.grad_accum == 0 or step + 1 == len(self.loader):
                self.optimizer.step()
                self.optimizer.zero_grad()
