"""A trainer that cuts each batch into micro-batches and resets the gradients before each one."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, micro_batch_size):
        self.model = model
        self.micro_batch_size = micro_batch_size
        self.criterion = nn.MSELoss(reduction="sum")
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    def train_step(self, inputs, targets):
        for start in range(0, len(inputs), self.micro_batch_size):
            self.optimizer.zero_grad(set_to_none=True)  # expect: TL007
            stop = start + self.micro_batch_size
            loss = self.criterion(self.model(inputs[start:stop]), targets[start:stop]) / len(inputs)
            loss.backward()
        self.optimizer.step()
