"""The annotated-transformer shape: `run_epoch` accumulates `accum_iter` micro-batches of a model it is handed;
`train_worker` wraps that model in DDP when `is_distributed` is set, and the toy run calls `run_epoch` with the
plain model and the default `accum_iter=1`, which accumulates nothing."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def run_epoch(data_iter, model, loss_compute, optimizer, scheduler, mode="train", accum_iter=1):
    total_loss = 0.0
    for i, batch in enumerate(data_iter):
        out = model.forward(  # expect: TL016
            batch.src, batch.tgt, batch.src_mask, batch.tgt_mask
        )
        loss = loss_compute(out, batch.tgt_y) / accum_iter
        if mode == "train":
            loss.backward()
            if (i + 1) % accum_iter == 0 or i + 1 == len(data_iter):
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                scheduler.step()
        total_loss += loss.item()
    return total_loss


def toy_example(model, criterion, data, optimizer, scheduler):
    for epoch in range(20):
        model.train()
        run_epoch(data, model, criterion, optimizer, scheduler, mode="train")


def train_worker(gpu, world_size, make_model, criterion, train_data, config, is_distributed=False):
    model = make_model()
    model.cuda(gpu)
    module = model
    if is_distributed:
        dist.init_process_group("nccl", rank=gpu, world_size=world_size)
        model = DDP(model, device_ids=[gpu])
        module = model.module
    optimizer = torch.optim.Adam(model.parameters(), lr=config["lr"])
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    for epoch in range(config["num_epochs"]):
        model.train()
        run_epoch(train_data, model, criterion, optimizer, scheduler, mode="train",
                  accum_iter=config["accum_iter"])
        torch.save(module.state_dict(), f"epoch{epoch}.pt")
