"""The engine is told not to scale (`scale_wrt_gas=False`), so the script divides by the engine's count itself."""
import deepspeed
import torch.nn.functional as F


def train(args, model, train_loader):
    engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model,
                                                   model_parameters=model.parameters())
    for epoch in range(args.epochs):
        for batch in train_loader:
            inputs, targets = batch[0].to(engine.device), batch[1].to(engine.device)
            loss = F.mse_loss(engine(inputs), targets)
            loss = loss / engine.gradient_accumulation_steps()
            engine.backward(loss, scale_wrt_gas=False)
            engine.step()
