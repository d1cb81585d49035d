import torch

from engine import train_one_epoch


def main(args, model, data_loader, criterion):
    device = torch.device("cuda")
    model.to(device)
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        train_one_epoch(model, criterion, data_loader, optimizer, device, accum_iter=args.accum_iter)
