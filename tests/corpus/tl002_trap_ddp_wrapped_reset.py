"""DDP: the optimizer is built on the wrapper, the gradients are reset on the wrapped module."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train(rank, model, loader, epochs):
    dist.init_process_group("nccl", rank=rank)
    model = model.to(rank)
    ddp_model = DDP(model, device_ids=[rank])
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for x, y in loader:
            model.zero_grad(set_to_none=True)
            loss = loss_fn(ddp_model(x.to(rank)), y.to(rank))
            loss.backward()
            optimizer.step()
