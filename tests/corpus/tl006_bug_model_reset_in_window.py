"""Gradient accumulation whose boundary block clears the model's gradients before stepping."""
import torch
import torch.nn.functional as F


def train(args, model, train_loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    model.train()
    for epoch in range(args.epochs):
        for i, (x, y) in enumerate(train_loader):
            x, y = x.to(args.device), y.to(args.device)
            loss = F.cross_entropy(model(x), y) / args.gradient_accumulation_steps
            loss.backward()
            if (i + 1) % args.gradient_accumulation_steps == 0 or (i + 1) == len(train_loader):
                model.zero_grad()  # expect: TL006
                optimizer.step()
