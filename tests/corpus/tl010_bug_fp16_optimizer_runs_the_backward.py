"""apex's `FP16_Optimizer` runs the backward itself (`optimizer.backward(loss)`) and steps without clearing the
gradients: an optimizer like any other, whose window leaves the epoch's last micro-batches unapplied."""
import torch


def train(model, loader, optimizer, args):
    model.train()
    for epoch in range(args.epochs):
        for step, batch in enumerate(loader):
            loss = model(*batch) / args.gradient_accumulation_steps
            if args.fp16:
                optimizer.backward(loss)
            else:
                loss.backward()
            if (step + 1) % args.gradient_accumulation_steps == 0:  # expect: TL010
                optimizer.step()
                optimizer.zero_grad()
