"""A generator yields `total_steps * accum_steps` micro-batches, each in a dict that also says where it sits in
its window (`micro % accum_steps`, passed by position); the loop steps when `index + 1 == accum_steps`. The
loss is the model's mean and is never divided."""
import torch


def micro_batches(loader, accum_steps, total_steps, device):
    micro = 0
    while True:
        for batch in loader:
            yield {"inputs": batch[0].to(device), "labels": batch[1].to(device), "index": micro % accum_steps}
            micro += 1
            if micro == total_steps * accum_steps:
                return


def fit(model, loader, accum_steps, total_steps, device="cuda"):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for item in micro_batches(loader, accum_steps, total_steps, device):
        loss = model(item["inputs"], labels=item["labels"]).loss
        loss.backward()  # expect: TL003
        if item["index"] + 1 == accum_steps:
            optimizer.step()
            optimizer.zero_grad()
